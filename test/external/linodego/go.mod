module github.com/linode-operator/external/linodego

go 1.25.0

require github.com/linode/linodego v1.69.1

require (
	github.com/go-resty/resty/v2 v2.17.2 // indirect
	github.com/google/go-querystring v1.2.0 // indirect
	golang.org/x/net v0.54.0 // indirect
	golang.org/x/text v0.37.0 // indirect
	gopkg.in/ini.v1 v1.67.2 // indirect
)
