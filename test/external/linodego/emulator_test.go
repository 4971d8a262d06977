// Drives the Linode API emulator with the official Go SDK (github.com/linode/linodego): every
// managed-database and NodeBalancer operation of the spec, checking the fields the SDK parses.
//
// LINODE_URL (e.g. http://127.0.0.1:PORT/v4) and LINODE_TOKEN name the emulator; without them
// the test is skipped. test/external/linodego.test.ts starts an emulator and runs this. By hand:
//
//	node src/cli/main.ts emulator --port 0 --token T --provision-seconds 0.2 --stats-delay-seconds 0
//	LINODE_URL=http://127.0.0.1:PORT/v4 LINODE_TOKEN=T GOFLAGS=-mod=mod go test -count=1 ./...
//
// (Without --stats-delay-seconds 0 the stats call gets the real API's 400 "Stats are
// unavailable at this time." for the first 5 emulated minutes of a NodeBalancer.)
package external

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linode/linodego"
)

const waitSeconds = 30

func newClient(t *testing.T) *linodego.Client {
	t.Helper()
	apiURL, token := os.Getenv("LINODE_URL"), os.Getenv("LINODE_TOKEN")
	if apiURL == "" || token == "" {
		t.Skip("LINODE_URL and LINODE_TOKEN must name a running emulator")
	}
	// NewClient itself reads LINODE_URL with SetBaseURL, which treats the whole URL as host
	// plus path and then appends the API version again (".../v4/v4"). UseURL splits the
	// origin from the version prefix the way the SDK documents for custom API URLs.
	client := linodego.NewClient(&http.Client{Timeout: 30 * time.Second})
	if _, err := client.UseURL(apiURL); err != nil {
		t.Fatalf("UseURL(%q): %v", apiURL, err)
	}
	client.SetToken(token)
	client.SetPollDelay(50 * time.Millisecond)
	client.SetRetryWaitTime(50 * time.Millisecond)
	client.SetRetryMaxWaitTime(time.Second)
	return &client
}

type result[T any] struct {
	v   T
	err error
}

func try[T any](v T, err error) result[T] { return result[T]{v, err} }

func (r result[T]) must(t *testing.T, what string) T {
	t.Helper()
	if r.err != nil {
		t.Fatalf("%s: %v", what, r.err)
	}
	return r.v
}

func ok(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func expectNotFound(t *testing.T, what string, err error) {
	t.Helper()
	var apiErr *linodego.Error
	if !errors.As(err, &apiErr) || apiErr.Code != http.StatusNotFound {
		t.Errorf("%s: want a 404 linodego.Error, got %v", what, err)
	}
}

func uniq(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1_000_000_000)
}

// The backup endpoints (legacy platform, in the spec) were removed from linodego in v1.66
// together with its DBaaS v1 support; they are driven through the SDK's own request builder
// (client.R: same base URL, auth, retries and error decoding) with linodego v1.65's types.
type backup struct {
	ID      int    `json:"id"`
	Label   string `json:"label"`
	Type    string `json:"type"`
	Created string `json:"created"`
}

type backupPage struct {
	Data    []backup `json:"data"`
	Page    int      `json:"page"`
	Pages   int      `json:"pages"`
	Results int      `json:"results"`
}

func apiCall(ctx context.Context, c *linodego.Client, method, path string, body, result any) error {
	req := c.R(ctx)
	if body != nil {
		req.SetBody(body)
	}
	if result != nil {
		req.SetResult(result)
	}
	resp, err := req.Execute(method, path)
	if err != nil {
		return err
	}
	if resp.IsError() {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode(), resp.String())
	}
	return nil
}

type dbOps struct {
	engine      linodego.DatabaseEngineType
	hostKind    string
	port        int
	username    string
	create      func(label string) (id int, status linodego.DatabaseStatus, allow []string, err error)
	get         func(id int) (*linodego.Database, error)
	list        func() ([]int, error)
	update      func(id int, label string, allow []string, window *linodego.DatabaseMaintenanceWindow) (status linodego.DatabaseStatus, err error)
	del         func(id int) error
	creds       func(id int) (user, pass string, err error)
	reset       func(id int) error
	patch       func(id int) error
	ssl         func(id int) ([]byte, error)
	getRaw      func(id int) (members int, platform linodego.DatabasePlatform, err error)
	backupsPath string
}

func TestDatabases(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()

	t.Run("engines", func(t *testing.T) {
		engines := try(c.ListDatabaseEngines(ctx, nil)).must(t, "ListDatabaseEngines")
		ids := []string{}
		for _, e := range engines {
			ids = append(ids, e.ID)
		}
		if !slices.Contains(ids, "mysql/8") || !slices.Contains(ids, "postgresql/16") {
			t.Fatalf("engines %v lack mysql/8 or postgresql/16", ids)
		}
		// linodego escapes the slash: GET /databases/engines/mysql%2F8.
		e := try(c.GetDatabaseEngine(ctx, nil, "mysql/8")).must(t, "GetDatabaseEngine")
		eq(t, "engine.id", e.ID, "mysql/8")
		eq(t, "engine.engine", e.Engine, "mysql")
		eq(t, "engine.version", e.Version, "8")
	})

	t.Run("types", func(t *testing.T) {
		types := try(c.ListDatabaseTypes(ctx, nil)).must(t, "ListDatabaseTypes")
		if len(types) == 0 {
			t.Fatal("no database types")
		}
		ty := try(c.GetDatabaseType(ctx, nil, "g6-nanode-1")).must(t, "GetDatabaseType")
		eq(t, "type.id", ty.ID, "g6-nanode-1")
		if len(ty.Engines.MySQL) == 0 || len(ty.Engines.PostgreSQL) == 0 || ty.Engines.MySQL[0].Price.Monthly <= 0 {
			t.Errorf("type engines/prices not parsed: %+v", ty.Engines)
		}
	})

	mysql := dbOps{
		engine: linodego.DatabaseEngineTypeMySQL, hostKind: "mysql", port: 3306, username: "linroot",
		backupsPath: "databases/mysql/instances/%d/backups",
		create: func(label string) (int, linodego.DatabaseStatus, []string, error) {
			db, err := c.CreateMySQLDatabase(ctx, linodego.MySQLCreateOptions{
				Label: label, Region: "us-east", Type: "g6-nanode-1", Engine: "mysql/8",
				AllowList: []string{"203.0.113.7", "198.51.100.0/24"}, ClusterSize: 1,
			})
			if err != nil {
				return 0, "", nil, err
			}
			if db.Hosts.Primary != "" || db.Created == nil || db.Engine != "mysql" || db.Version != "8" || db.Port != 3306 {
				return 0, "", nil, fmt.Errorf("unexpected create response %+v", db)
			}
			return db.ID, db.Status, db.AllowList, nil
		},
		get: func(id int) (*linodego.Database, error) {
			db, err := c.GetMySQLDatabase(ctx, id)
			if err != nil {
				return nil, err
			}
			return &linodego.Database{ID: db.ID, Status: db.Status, Label: db.Label, Hosts: db.Hosts, Port: db.Port, AllowList: db.AllowList, Updates: db.Updates, Engine: db.Engine, Version: db.Version, Created: db.Created, Updated: db.Updated}, nil
		},
		getRaw: func(id int) (int, linodego.DatabasePlatform, error) {
			db, err := c.GetMySQLDatabase(ctx, id)
			if err != nil {
				return 0, "", err
			}
			return len(db.Members), db.Platform, nil
		},
		list: func() ([]int, error) {
			dbs, err := c.ListMySQLDatabases(ctx, nil)
			ids := []int{}
			for _, d := range dbs {
				ids = append(ids, d.ID)
			}
			return ids, err
		},
		update: func(id int, label string, allow []string, w *linodego.DatabaseMaintenanceWindow) (linodego.DatabaseStatus, error) {
			db, err := c.UpdateMySQLDatabase(ctx, id, linodego.MySQLUpdateOptions{Label: label, AllowList: &allow, Updates: w})
			if err != nil {
				return "", err
			}
			return db.Status, nil
		},
		del: func(id int) error { return c.DeleteMySQLDatabase(ctx, id) },
		creds: func(id int) (string, string, error) {
			cr, err := c.GetMySQLDatabaseCredentials(ctx, id)
			if err != nil {
				return "", "", err
			}
			return cr.Username, cr.Password, nil
		},
		reset: func(id int) error { return c.ResetMySQLDatabaseCredentials(ctx, id) },
		patch: func(id int) error { return c.PatchMySQLDatabase(ctx, id) },
		ssl: func(id int) ([]byte, error) {
			s, err := c.GetMySQLDatabaseSSL(ctx, id)
			if err != nil {
				return nil, err
			}
			return s.CACertificate, nil
		},
	}
	postgres := dbOps{
		engine: linodego.DatabaseEngineTypePostgres, hostKind: "pgsql", port: 5432, username: "linpostgres",
		backupsPath: "databases/postgresql/instances/%d/backups",
		create: func(label string) (int, linodego.DatabaseStatus, []string, error) {
			db, err := c.CreatePostgresDatabase(ctx, linodego.PostgresCreateOptions{
				Label: label, Region: "us-east", Type: "g6-nanode-1", Engine: "postgresql/16",
				AllowList: []string{"203.0.113.7", "198.51.100.0/24"},
			})
			if err != nil {
				return 0, "", nil, err
			}
			if db.Hosts.Primary != "" || db.Created == nil || db.Engine != "postgresql" || db.Version != "16" || db.Port != 5432 {
				return 0, "", nil, fmt.Errorf("unexpected create response %+v", db)
			}
			return db.ID, db.Status, db.AllowList, nil
		},
		get: func(id int) (*linodego.Database, error) {
			db, err := c.GetPostgresDatabase(ctx, id)
			if err != nil {
				return nil, err
			}
			return &linodego.Database{ID: db.ID, Status: db.Status, Label: db.Label, Hosts: db.Hosts, Port: db.Port, AllowList: db.AllowList, Updates: db.Updates, Engine: db.Engine, Version: db.Version, Created: db.Created, Updated: db.Updated}, nil
		},
		getRaw: func(id int) (int, linodego.DatabasePlatform, error) {
			db, err := c.GetPostgresDatabase(ctx, id)
			if err != nil {
				return 0, "", err
			}
			return len(db.Members), db.Platform, nil
		},
		list: func() ([]int, error) {
			dbs, err := c.ListPostgresDatabases(ctx, nil)
			ids := []int{}
			for _, d := range dbs {
				ids = append(ids, d.ID)
			}
			return ids, err
		},
		update: func(id int, label string, allow []string, w *linodego.DatabaseMaintenanceWindow) (linodego.DatabaseStatus, error) {
			db, err := c.UpdatePostgresDatabase(ctx, id, linodego.PostgresUpdateOptions{Label: label, AllowList: &allow, Updates: w})
			if err != nil {
				return "", err
			}
			return db.Status, nil
		},
		del: func(id int) error { return c.DeletePostgresDatabase(ctx, id) },
		creds: func(id int) (string, string, error) {
			cr, err := c.GetPostgresDatabaseCredentials(ctx, id)
			if err != nil {
				return "", "", err
			}
			return cr.Username, cr.Password, nil
		},
		reset: func(id int) error { return c.ResetPostgresDatabaseCredentials(ctx, id) },
		patch: func(id int) error { return c.PatchPostgresDatabase(ctx, id) },
		ssl: func(id int) ([]byte, error) {
			s, err := c.GetPostgresDatabaseSSL(ctx, id)
			if err != nil {
				return nil, err
			}
			return s.CACertificate, nil
		},
	}

	for _, ops := range []dbOps{mysql, postgres} {
		t.Run(string(ops.engine), func(t *testing.T) { databaseLifecycle(t, c, ops) })
	}
}

func databaseLifecycle(t *testing.T, c *linodego.Client, ops dbOps) {
	ctx := context.Background()
	wait := func(id int, status linodego.DatabaseStatus) {
		t.Helper()
		ok(t, fmt.Sprintf("WaitForDatabaseStatus(%d, %s)", id, status), c.WaitForDatabaseStatus(ctx, id, ops.engine, status, waitSeconds))
	}

	label := uniq("sdk-" + ops.hostKind)
	id, status, allow, err := ops.create(label)
	ok(t, "create", err)
	eq(t, "create status", status, linodego.DatabaseStatusProvisioning)
	// Bare addresses come back in /32 form, sorted.
	eq(t, "create allow_list", strings.Join(allow, ","), "198.51.100.0/24,203.0.113.7/32")
	wait(id, linodego.DatabaseStatusActive)

	db := try(ops.get(id)).must(t, "get")
	eq(t, "label", db.Label, label)
	eq(t, "port", db.Port, ops.port)
	hostRe := regexp.MustCompile(fmt.Sprintf(`^lin-%d-\d+-%s-primary\.servers\.linodedb\.net$`, id, ops.hostKind))
	if !hostRe.MatchString(db.Hosts.Primary) {
		t.Errorf("hosts.primary %q does not match %s", db.Hosts.Primary, hostRe)
	}
	if db.Created == nil || db.Updated == nil || db.Updated.Before(*db.Created) {
		t.Errorf("created/updated not parsed: %v %v", db.Created, db.Updated)
	}
	members, platform, err := ops.getRaw(id)
	ok(t, "get (members)", err)
	eq(t, "members", members, 1)
	eq(t, "platform", platform, linodego.DatabasePlatformRDBMSLegacy)

	ids := try(ops.list()).must(t, "list")
	if !slices.Contains(ids, id) {
		t.Errorf("engine list %v lacks %d", ids, id)
	}
	all := try(c.ListDatabases(ctx, nil)).must(t, "ListDatabases")
	found := false
	for _, d := range all {
		if d.ID == id {
			found = true
			eq(t, "instance_uri", d.InstanceURI, fmt.Sprintf("/v4/databases/%s/instances/%d", ops.engine, id))
			eq(t, "all-list engine", d.Engine, string(ops.engine))
		}
	}
	if !found {
		t.Errorf("ListDatabases lacks %d", id)
	}

	// Update: label, allow_list (applies asynchronously: updating, then active) and window.
	newLabel := label + "-b"
	window := &linodego.DatabaseMaintenanceWindow{DayOfWeek: linodego.DatabaseMaintenanceDayWednesday, Duration: 2, Frequency: linodego.DatabaseMaintenanceFrequencyWeekly, HourOfDay: 5}
	status = try(ops.update(id, newLabel, []string{"192.0.2.10"}, window)).must(t, "update")
	eq(t, "update status", status, linodego.DatabaseStatusUpdating)
	wait(id, linodego.DatabaseStatusActive)
	db = try(ops.get(id)).must(t, "get after update")
	eq(t, "updated label", db.Label, newLabel)
	eq(t, "updated allow_list", strings.Join(db.AllowList, ","), "192.0.2.10/32")
	eq(t, "updates.day_of_week", db.Updates.DayOfWeek, linodego.DatabaseMaintenanceDayWednesday)
	eq(t, "updates.hour_of_day", db.Updates.HourOfDay, 5)
	eq(t, "updates.duration", db.Updates.Duration, 2)
	eq(t, "updates.frequency", db.Updates.Frequency, linodego.DatabaseMaintenanceFrequencyWeekly)

	ca := try(ops.ssl(id)).must(t, "ssl")
	if !strings.HasPrefix(string(ca), "-----BEGIN CERTIFICATE-----") {
		t.Errorf("ca_certificate is not a base64 PEM certificate: %.40q", ca)
	}
	user, pass, err := ops.creds(id)
	ok(t, "credentials", err)
	eq(t, "username", user, ops.username)
	if pass == "" {
		t.Error("empty password")
	}

	ok(t, "patch", ops.patch(id))
	eq(t, "status after patch", try(ops.get(id)).must(t, "get").Status, linodego.DatabaseStatusUpdating)
	wait(id, linodego.DatabaseStatusActive)

	// Snapshot, list, view, restore, delete (before the credentials reset: a restore after a
	// reset leaves the cluster failed).
	backups := fmt.Sprintf(ops.backupsPath, id)
	ok(t, "snapshot create", apiCall(ctx, c, http.MethodPost, backups, map[string]string{"label": "sdksnap1", "target": "primary"}, &map[string]any{}))
	eq(t, "status after snapshot", try(ops.get(id)).must(t, "get").Status, linodego.DatabaseStatusBackingUp)
	wait(id, linodego.DatabaseStatusActive)
	var page backupPage
	ok(t, "backups list", apiCall(ctx, c, http.MethodGet, backups, nil, &page))
	var snap *backup
	for i := range page.Data {
		if page.Data[i].Label == "sdksnap1" {
			snap = &page.Data[i]
		}
	}
	if snap == nil {
		t.Fatalf("snapshot missing from %+v", page)
	}
	eq(t, "snapshot type", snap.Type, "snapshot")
	if _, err := time.Parse("2006-01-02T15:04:05", snap.Created); err != nil {
		t.Errorf("backup created %q: %v", snap.Created, err)
	}
	var one backup
	ok(t, "backup view", apiCall(ctx, c, http.MethodGet, fmt.Sprintf("%s/%d", backups, snap.ID), nil, &one))
	eq(t, "backup view", one, *snap)
	ok(t, "backup restore", apiCall(ctx, c, http.MethodPost, fmt.Sprintf("%s/%d/restore", backups, snap.ID), nil, &map[string]any{}))
	eq(t, "status after restore", try(ops.get(id)).must(t, "get").Status, linodego.DatabaseStatusRestoring)
	wait(id, linodego.DatabaseStatusActive)
	ok(t, "backup delete", apiCall(ctx, c, http.MethodDelete, fmt.Sprintf("%s/%d", backups, snap.ID), nil, &map[string]any{}))
	err = apiCall(ctx, c, http.MethodGet, fmt.Sprintf("%s/%d", backups, snap.ID), nil, &one)
	if err == nil || !strings.Contains(err.Error(), ": 404 ") {
		t.Errorf("deleted backup: want 404, got %v", err)
	}

	// The new password appears after a short delay.
	ok(t, "credentials reset", ops.reset(id))
	deadline := time.Now().Add(waitSeconds * time.Second)
	for {
		_, p, err := ops.creds(id)
		ok(t, "credentials after reset", err)
		if p != pass {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("password never changed after reset")
		}
		time.Sleep(50 * time.Millisecond)
	}

	ok(t, "delete", ops.del(id))
	_, err = ops.get(id)
	expectNotFound(t, "get after delete", err)
}

func selfSigned(t *testing.T, cn string) (certPEM, keyPEM string, fingerprint string) {
	t.Helper()
	key := try(ecdsa.GenerateKey(elliptic.P256(), rand.Reader)).must(t, "key")
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(42), Subject: pkix.Name{CommonName: cn}, DNSNames: []string{cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
	}
	der := try(x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)).must(t, "certificate")
	keyDER := try(x509.MarshalPKCS8PrivateKey(key)).must(t, "marshal key")
	// The spec: ssl_fingerprint is the "SHA1 fingerprint derived from the certificate".
	sum := sha1.Sum(der)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})),
		strings.Join(parts, ":")
}

func TestNodeBalancers(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()

	label := uniq("sdk-nb")
	throttle := 5
	nb := try(c.CreateNodeBalancer(ctx, linodego.NodeBalancerCreateOptions{
		Label: &label, Region: "us-east", ClientConnThrottle: &throttle, Tags: []string{"sdk"}, FirewallID: 4242,
	})).must(t, "CreateNodeBalancer")
	if nb.ID == 0 || nb.Label == nil || *nb.Label != label || nb.Region != "us-east" {
		t.Fatalf("unexpected create response %+v", nb)
	}
	eq(t, "client_conn_throttle", nb.ClientConnThrottle, 5)
	eq(t, "type", nb.Type, linodego.NBTypeCommon)
	if nb.IPv4 == nil || nb.Hostname == nil || *nb.Hostname != strings.ReplaceAll(*nb.IPv4, ".", "-")+".ip.linodeusercontent.com" {
		t.Errorf("hostname/ipv4 mismatch: %v %v", nb.Hostname, nb.IPv4)
	}
	if nb.IPv6 == nil || *nb.IPv6 == "" || nb.Created == nil {
		t.Errorf("ipv6/created missing: %+v", nb)
	}
	if nb.Transfer.In != nil || nb.Transfer.Out != nil || nb.Transfer.Total != nil {
		t.Errorf("a new NodeBalancer's transfer should be null: %+v", nb.Transfer)
	}

	got := try(c.GetNodeBalancer(ctx, nb.ID)).must(t, "GetNodeBalancer")
	eq(t, "get label", *got.Label, label)
	all := try(c.ListNodeBalancers(ctx, nil)).must(t, "ListNodeBalancers")
	if !slices.ContainsFunc(all, func(n linodego.NodeBalancer) bool { return n.ID == nb.ID }) {
		t.Errorf("ListNodeBalancers lacks %d", nb.ID)
	}
	newLabel, tags := label+"-b", []string{"sdk", "updated"}
	upd := try(c.UpdateNodeBalancer(ctx, nb.ID, linodego.NodeBalancerUpdateOptions{Label: &newLabel, Tags: &tags})).must(t, "UpdateNodeBalancer")
	eq(t, "updated label", *upd.Label, newLabel)
	eq(t, "updated tags", strings.Join(upd.Tags, ","), "sdk,updated")

	fws := try(c.ListNodeBalancerFirewalls(ctx, nb.ID, nil)).must(t, "ListNodeBalancerFirewalls")
	if len(fws) != 1 || fws[0].ID != 4242 || len(fws[0].Entities) != 1 || fws[0].Entities[0].ID != nb.ID {
		t.Errorf("unexpected firewalls %+v", fws)
	}

	// The firewall changed in place through its devices (beyond the spec's NodeBalancer document).
	devs := try(c.ListFirewallDevices(ctx, 4242, nil)).must(t, "ListFirewallDevices")
	if len(devs) != 1 || devs[0].Entity.ID != nb.ID || devs[0].Entity.Type != linodego.FirewallDeviceNodeBalancer {
		t.Errorf("unexpected firewall devices %+v", devs)
	}
	if err := c.DeleteFirewallDevice(ctx, 4242, devs[0].ID); err != nil {
		t.Errorf("DeleteFirewallDevice: %v", err)
	}
	dev := try(c.CreateFirewallDevice(ctx, 4343, linodego.FirewallDeviceCreateOptions{ID: nb.ID, Type: linodego.FirewallDeviceNodeBalancer})).must(t, "CreateFirewallDevice")
	device := try(c.GetFirewallDevice(ctx, 4343, dev.ID)).must(t, "GetFirewallDevice")
	eq(t, "device entity", device.Entity.ID, nb.ID)
	if fw := try(c.GetFirewall(ctx, 4343)).must(t, "GetFirewall"); fw.ID != 4343 || fw.Status != linodego.FirewallEnabled {
		t.Errorf("unexpected firewall %+v", fw)
	}
	fws = try(c.ListNodeBalancerFirewalls(ctx, nb.ID, nil)).must(t, "ListNodeBalancerFirewalls")
	if len(fws) != 1 || fws[0].ID != 4343 {
		t.Errorf("unexpected firewalls after the change %+v", fws)
	}

	stats := try(c.GetNodeBalancerStats(ctx, nb.ID)).must(t, "GetNodeBalancerStats")
	// With no statistics delay the series may still be empty; the shape must parse.
	if !strings.Contains(stats.Title, newLabel) || len(stats.Data.Traffic.In) != len(stats.Data.Connections) {
		t.Errorf("unexpected stats %+v", stats)
	}

	// Configs: an http one with defaults, an https one with a certificate.
	httpCfg := try(c.CreateNodeBalancerConfig(ctx, nb.ID, linodego.NodeBalancerConfigCreateOptions{
		Port: 80, Protocol: linodego.ProtocolHTTP, Algorithm: linodego.AlgorithmRoundRobin, CheckInterval: 60,
	})).must(t, "CreateNodeBalancerConfig http")
	eq(t, "http nodebalancer_id", httpCfg.NodeBalancerID, nb.ID)
	eq(t, "http check_timeout default", httpCfg.CheckTimeout, 30)
	eq(t, "http check_attempts default", httpCfg.CheckAttempts, 3)
	eq(t, "http stickiness default", httpCfg.Stickiness, linodego.StickinessNone)
	eq(t, "http cipher_suite default", httpCfg.CipherSuite, linodego.CipherRecommended)
	eq(t, "http ssl_cert", httpCfg.SSLCert, "")
	if httpCfg.NodesStatus == nil || httpCfg.NodesStatus.Up != 0 || httpCfg.NodesStatus.Down != 0 {
		t.Errorf("nodes_status %+v", httpCfg.NodesStatus)
	}

	cn := "sdk.example.test"
	certPEM, keyPEM, fingerprint := selfSigned(t, cn)
	httpsCfg := try(c.CreateNodeBalancerConfig(ctx, nb.ID, linodego.NodeBalancerConfigCreateOptions{
		Port: 443, Protocol: linodego.ProtocolHTTPS, Algorithm: linodego.AlgorithmLeastConn, SSLCert: certPEM, SSLKey: keyPEM,
		Check: linodego.CheckHTTP, CheckPath: "/healthz", CheckInterval: 10, CheckTimeout: 5, CheckAttempts: 2,
	})).must(t, "CreateNodeBalancerConfig https")
	eq(t, "ssl_fingerprint", httpsCfg.SSLFingerprint, fingerprint)
	eq(t, "ssl_commonname", httpsCfg.SSLCommonName, cn)
	eq(t, "ssl_cert redacted", httpsCfg.SSLCert, "<REDACTED>")
	eq(t, "ssl_key redacted", httpsCfg.SSLKey, "<REDACTED>")
	eq(t, "check_path", httpsCfg.CheckPath, "/healthz")

	cfgs := try(c.ListNodeBalancerConfigs(ctx, nb.ID, nil)).must(t, "ListNodeBalancerConfigs")
	eq(t, "config count", len(cfgs), 2)
	gotCfg := try(c.GetNodeBalancerConfig(ctx, nb.ID, httpsCfg.ID)).must(t, "GetNodeBalancerConfig")
	eq(t, "get config fingerprint", gotCfg.SSLFingerprint, fingerprint)
	updCfg := try(c.UpdateNodeBalancerConfig(ctx, nb.ID, httpCfg.ID, linodego.NodeBalancerConfigUpdateOptions{
		Port: 8080, Protocol: linodego.ProtocolTCP, Stickiness: linodego.StickinessTable, CheckInterval: 20, CheckTimeout: 10,
	})).must(t, "UpdateNodeBalancerConfig")
	eq(t, "updated port", updCfg.Port, 8080)
	eq(t, "updated protocol", updCfg.Protocol, linodego.ProtocolTCP)
	eq(t, "updated stickiness", updCfg.Stickiness, linodego.StickinessTable)

	// Nodes.
	node := try(c.CreateNodeBalancerNode(ctx, nb.ID, httpCfg.ID, linodego.NodeBalancerNodeCreateOptions{
		Address: "192.168.210.10:80", Label: "sdk-node-a", Weight: 20,
	})).must(t, "CreateNodeBalancerNode")
	eq(t, "node address", node.Address, "192.168.210.10:80")
	eq(t, "node weight", node.Weight, 20)
	eq(t, "node mode default", node.Mode, linodego.ModeAccept)
	eq(t, "node config_id", node.ConfigID, httpCfg.ID)
	eq(t, "node nodebalancer_id", node.NodeBalancerID, nb.ID)
	if !strings.EqualFold(node.Status, "unknown") {
		t.Errorf("new node status %q, want unknown/Unknown", node.Status)
	}
	gotNode := try(c.GetNodeBalancerNode(ctx, nb.ID, httpCfg.ID, node.ID)).must(t, "GetNodeBalancerNode")
	eq(t, "get node label", gotNode.Label, "sdk-node-a")
	updNode := try(c.UpdateNodeBalancerNode(ctx, nb.ID, httpCfg.ID, node.ID, linodego.NodeBalancerNodeUpdateOptions{
		Weight: 80, Mode: linodego.ModeDrain, Label: "sdk-node-a2",
	})).must(t, "UpdateNodeBalancerNode")
	eq(t, "updated weight", updNode.Weight, 80)
	eq(t, "updated mode", updNode.Mode, linodego.ModeDrain)
	eq(t, "updated node label", updNode.Label, "sdk-node-a2")
	nodeB := try(c.CreateNodeBalancerNode(ctx, nb.ID, httpCfg.ID, linodego.NodeBalancerNodeCreateOptions{
		Address: "10.0.0.5:80", Label: "sdk-node-b", // any RFC 1918 address (a VPC), not only 192.168.128.0/17
	})).must(t, "CreateNodeBalancerNode b")
	nodes := try(c.ListNodeBalancerNodes(ctx, nb.ID, httpCfg.ID, nil)).must(t, "ListNodeBalancerNodes")
	eq(t, "node count", len(nodes), 2)
	vpcNode := try(c.UpdateNodeBalancerNode(ctx, nb.ID, httpCfg.ID, nodeB.ID, linodego.NodeBalancerNodeUpdateOptions{Address: "172.16.4.9:80"})).must(t, "UpdateNodeBalancerNode to 172.16.x")
	eq(t, "updated node address", vpcNode.Address, "172.16.4.9:80")
	ok(t, "DeleteNodeBalancerNode", c.DeleteNodeBalancerNode(ctx, nb.ID, httpCfg.ID, nodeB.ID))
	_, err := c.GetNodeBalancerNode(ctx, nb.ID, httpCfg.ID, nodeB.ID)
	expectNotFound(t, "deleted node", err)

	// Rebuild: keep node a (by id, changed), add node c; anything omitted is removed.
	rebuilt := try(c.RebuildNodeBalancerConfig(ctx, nb.ID, httpCfg.ID, linodego.NodeBalancerConfigRebuildOptions{
		Port: 8080, Protocol: linodego.ProtocolTCP, CheckInterval: 20, CheckTimeout: 10,
		Nodes: []linodego.NodeBalancerConfigRebuildNodeOptions{
			{ID: node.ID, NodeBalancerNodeCreateOptions: linodego.NodeBalancerNodeCreateOptions{Address: "192.168.210.12:8080", Label: "sdk-node-a3", Weight: 10}},
			{NodeBalancerNodeCreateOptions: linodego.NodeBalancerNodeCreateOptions{Address: "192.168.10.5:8080", Label: "sdk-node-c"}},
		},
	})).must(t, "RebuildNodeBalancerConfig")
	eq(t, "rebuilt config id", rebuilt.ID, httpCfg.ID)
	if rebuilt.NodesStatus == nil || rebuilt.NodesStatus.Up+rebuilt.NodesStatus.Down != 2 {
		t.Errorf("rebuilt nodes_status %+v", rebuilt.NodesStatus)
	}
	nodes = try(c.ListNodeBalancerNodes(ctx, nb.ID, httpCfg.ID, nil)).must(t, "ListNodeBalancerNodes after rebuild")
	labels := []string{}
	for _, n := range nodes {
		labels = append(labels, n.Label)
		if n.Label == "sdk-node-a3" && (n.ID != node.ID || n.Address != "192.168.210.12:8080" || n.Weight != 10) {
			t.Errorf("kept node not updated in place: %+v", n)
		}
	}
	slices.Sort(labels)
	eq(t, "nodes after rebuild", strings.Join(labels, ","), "sdk-node-a3,sdk-node-c")

	// A premium NodeBalancer created with its backend VPC, configs and nodes in one request (a
	// premium NodeBalancer takes VPC backends, not legacy private addresses).
	vpc := try(c.CreateVPC(ctx, linodego.VPCCreateOptions{
		Label: "sdk-vpc", Region: "us-east", Subnets: []linodego.VPCSubnetCreateOptions{{Label: "backends", IPv4: "10.0.0.0/24"}},
	})).must(t, "CreateVPC")
	subnet := vpc.Subnets[0].ID
	full := try(c.CreateNodeBalancer(ctx, linodego.NodeBalancerCreateOptions{
		Region: "us-east", Type: linodego.NBTypePremium, VPCs: []linodego.NodeBalancerVPCOptions{{SubnetID: subnet}},
		Configs: []*linodego.NodeBalancerConfigCreateOptions{{
			Port: 80, Protocol: linodego.ProtocolHTTP,
			Nodes: []linodego.NodeBalancerNodeCreateOptions{{Address: "10.0.0.20:80", Label: "sdk-inline", Mode: linodego.ModeBackup, SubnetID: subnet}},
		}},
	})).must(t, "CreateNodeBalancer with configs")
	vpcConfigs := try(c.ListNodeBalancerVPCConfigs(ctx, full.ID, nil)).must(t, "ListNodeBalancerVPCConfigs")
	if len(vpcConfigs) != 1 || vpcConfigs[0].SubnetID != subnet || vpcConfigs[0].IPv4Range == "" {
		t.Errorf("VPC configs %+v", vpcConfigs)
	}
	eq(t, "inline type", full.Type, linodego.NBTypePremium)
	if full.Label == nil || *full.Label != fmt.Sprintf("nodebalancer%d", full.ID) {
		t.Errorf("default label %v", full.Label)
	}
	if full.Tags == nil || len(full.Tags) != 0 {
		t.Errorf("tags sent as null should come back as [], got %#v", full.Tags)
	}
	inline := try(c.ListNodeBalancerConfigs(ctx, full.ID, nil)).must(t, "ListNodeBalancerConfigs inline")
	if len(inline) != 1 || inline[0].NodesStatus == nil || inline[0].NodesStatus.Up+inline[0].NodesStatus.Down != 1 {
		t.Errorf("inline configs %+v", inline)
	} else {
		inNodes := try(c.ListNodeBalancerNodes(ctx, full.ID, inline[0].ID, nil)).must(t, "ListNodeBalancerNodes inline")
		if len(inNodes) != 1 || inNodes[0].Mode != linodego.ModeBackup || inNodes[0].Label != "sdk-inline" || len(vpcConfigs) != 1 || inNodes[0].VPCConfigID != vpcConfigs[0].ID {
			t.Errorf("inline nodes %+v", inNodes)
		}
	}
	ok(t, "DeleteNodeBalancer inline", c.DeleteNodeBalancer(ctx, full.ID))

	// Validation errors reach the SDK as *linodego.Error with the API's field and reason.
	_, err = c.CreateNodeBalancerNode(ctx, nb.ID, httpCfg.ID, linodego.NodeBalancerNodeCreateOptions{Address: "8.8.8.8:80", Label: "public"})
	var apiErr *linodego.Error
	if !errors.As(err, &apiErr) || apiErr.Code != http.StatusBadRequest || !strings.Contains(apiErr.Message, "[address]") {
		t.Errorf("public backend address: want 400 on [address], got %v", err)
	}

	ok(t, "DeleteNodeBalancerConfig", c.DeleteNodeBalancerConfig(ctx, nb.ID, httpsCfg.ID))
	_, err = c.GetNodeBalancerConfig(ctx, nb.ID, httpsCfg.ID)
	expectNotFound(t, "deleted config", err)
	ok(t, "DeleteNodeBalancer", c.DeleteNodeBalancer(ctx, nb.ID))
	_, err = c.GetNodeBalancer(ctx, nb.ID)
	expectNotFound(t, "deleted NodeBalancer", err)
}

// UDP configs and resource locks, as linodego drives them (its TestNodeBalancerConfig_UDP and
// TestNodeBalancer_Locks in spirit): a udp config refused on a common NodeBalancer (premium-only
// since Akamai's changelog of 2026-09-30; the 2026-07 recording made one on common), the
// recorded udp create on a premium one, a lock that keeps the NodeBalancer from being deleted
// until it is removed.
func TestNodeBalancerUDPAndLocks(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	checkPort := 1234
	udp := linodego.NodeBalancerConfigCreateOptions{
		Port: 80, Protocol: linodego.ProtocolUDP, Algorithm: linodego.AlgorithmRingHash, CheckInterval: 60, UDPCheckPort: &checkPort,
	}

	commonLabel := uniq("sdk-udp-common")
	common := try(c.CreateNodeBalancer(ctx, linodego.NodeBalancerCreateOptions{Label: &commonLabel, Region: "us-east"})).must(t, "CreateNodeBalancer common")
	_, err := c.CreateNodeBalancerConfig(ctx, common.ID, udp)
	var apiErr *linodego.Error
	if !errors.As(err, &apiErr) || apiErr.Code != http.StatusBadRequest {
		t.Errorf("a udp config on a common NodeBalancer: want a 400 linodego.Error, got %v", err)
	}
	ok(t, "DeleteNodeBalancer common", c.DeleteNodeBalancer(ctx, common.ID))

	label, throttle := uniq("sdk-udp"), 3
	nb := try(c.CreateNodeBalancer(ctx, linodego.NodeBalancerCreateOptions{Label: &label, Region: "us-east", Type: linodego.NBTypePremium, ClientUDPSessThrottle: &throttle})).must(t, "CreateNodeBalancer")
	eq(t, "client_udp_sess_throttle", nb.ClientUDPSessThrottle, 3)
	cfg := try(c.CreateNodeBalancerConfig(ctx, nb.ID, udp)).must(t, "CreateNodeBalancerConfig udp")
	eq(t, "udp stickiness", cfg.Stickiness, linodego.StickinessSession)
	eq(t, "udp check_passive", cfg.CheckPassive, false)
	eq(t, "udp_check_port", cfg.UDPCheckPort, 1234)
	eq(t, "udp_session_timeout", cfg.UDPSessionTimeout, 16)

	lock := try(c.CreateLock(ctx, linodego.LockCreateOptions{EntityType: linodego.EntityNodebalancer, EntityID: nb.ID, LockType: linodego.LockTypeCannotDelete})).must(t, "CreateLock")
	eq(t, "lock entity", lock.Entity.ID, nb.ID)
	got := try(c.GetNodeBalancer(ctx, nb.ID)).must(t, "GetNodeBalancer")
	if len(got.Locks) != 1 || got.Locks[0] != linodego.LockTypeCannotDelete {
		t.Errorf("locks = %v, want [cannot_delete]", got.Locks)
	}
	if err := c.DeleteNodeBalancer(ctx, nb.ID); err == nil {
		t.Errorf("a locked NodeBalancer was deleted")
	}
	if locks := try(c.ListLocks(ctx, nil)).must(t, "ListLocks"); !slices.ContainsFunc(locks, func(l linodego.Lock) bool { return l.ID == lock.ID }) {
		t.Errorf("ListLocks lacks %d", lock.ID)
	}
	eq(t, "GetLock", try(c.GetLock(ctx, lock.ID)).must(t, "GetLock").LockType, linodego.LockTypeCannotDelete)
	if err := c.DeleteLock(ctx, lock.ID); err != nil {
		t.Fatalf("DeleteLock: %v", err)
	}
	if err := c.DeleteNodeBalancer(ctx, nb.ID); err != nil {
		t.Errorf("DeleteNodeBalancer after the lock is gone: %v", err)
	}
}
