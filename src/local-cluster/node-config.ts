// Config files for containerd (CRI) and the kubelet of the one-node real cluster. Each
// setting is one that mattered on this machine; the comment at each says why.
import { join } from "node:path";

export interface NodeDirs {
  /** The cluster's private directory: root, state, socket, CNI config and IPAM state live here. */
  dir: string;
  /** Bridge name inside the cluster's network namespace (<= 15 chars). */
  bridge: string;
  /** CNI network name; libcni's result cache files carry it, so teardown can find ours. */
  network: string;
  /** The node's /32 inside the namespace (pods get a route to it via the bridge). */
  nodeIp: string;
}

export const containerdSocket = (d: NodeDirs): string => join(d.dir, "containerd", "containerd.sock");

export function containerdToml(d: NodeDirs, opts: { runc: string; cniBin: string; sandboxImage: string }): string {
  const c = join(d.dir, "containerd");
  return `version = 2
root = "${c}/root"
state = "${c}/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "${containerdSocket(d)}"

[ttrpc]
  address = "${c}/containerd.ttrpc.sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "${c}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${opts.sandboxImage}"
  # Required: this VM lacks CAP_SYS_RESOURCE, runc fails to set oom_score_adj -998 otherwise.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "${opts.runc}"
        SystemdCgroup = false
  # Registry hosts (hosts.toml per registry): the netns's own registry is plain HTTP on loopback.
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${c}/certs.d"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${opts.cniBin}"
    conf_dir = "${d.dir}/cni/net.d"
    max_conf_num = 1
`;
}

/** containerd's hosts.toml for a plain-HTTP registry at `host` (e.g. 127.0.0.1:5000), in certs.d/<host>/. */
export function registryHostsToml(host: string): string {
  return `server = "http://${host}"

[host."http://${host}"]
  capabilities = ["pull", "resolve"]
  skip_verify = true
`;
}

/**
 * Bridge CNI on the cluster's own bridge (inside its network namespace). No isDefaultGateway:
 * a pod then has no default route and anything not on the pod subnet fails at once with
 * ENETUNREACH (with one, connects hang ~2 min on rate-limited ICMP). No ipMasq, no portmap:
 * no iptables rules.
 */
export function cniConflist(d: NodeDirs): string {
  return JSON.stringify({
    cniVersion: "0.4.0",
    name: d.network,
    plugins: [
      {
        type: "bridge", bridge: d.bridge, isGateway: true, ipMasq: false, hairpinMode: true,
        ipam: {
          type: "host-local", dataDir: join(d.dir, "cni", "ipam"),
          ranges: [[{ subnet: "10.244.0.0/24", gateway: "10.244.0.1" }]],
          // The one route besides the pod subnet: to the node's address, where the apiserver
          // (and a test's emulator) listen. Still no default route.
          routes: [{ dst: `${d.nodeIp}/32`, gw: "10.244.0.1" }],
        },
      },
      { type: "loopback" },
    ],
  }, null, 2);
}

/** How often the kubelet syncs each pod, which bounds how late a Secret update reaches a mounted file. */
export const KUBELET_SYNC_SECONDS = 3;

export function kubeletConfigYaml(d: NodeDirs, opts: { port: number; healthzPort: number }): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: ${opts.port}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: ${opts.healthzPort}
containerRuntimeEndpoint: unix://${containerdSocket(d)}
# The host has cgroup v1 and no systemd managing our cgroups.
cgroupDriver: cgroupfs
failSwapOn: false
# Otherwise the kubelet adds chains to the firewall (of the namespace, but keep it clean).
makeIPTablesUtilChains: false
# Secret updates reach mounted files within a few seconds instead of ~71 s (default 1m).
syncFrequency: ${KUBELET_SYNC_SECONDS}s
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
evictionHard:
  memory.available: "1Mi"
  nodefs.available: "1%"
  nodefs.inodesFree: "1%"
  imagefs.available: "1%"
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
podLogsDir: ${join(d.dir, "pod-logs")}
volumePluginDir: ${join(d.dir, "volume-plugins")}
serializeImagePulls: false
`;
}
