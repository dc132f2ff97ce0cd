#!/usr/bin/python3
"""docker/agones/*.yaml agree with each other and with the server: the Fleet's game port is the
one the server reads (SWARMFIELD_AGONES_PORT_NAME), its operations port is the one the probes
and the PodMonitor use, and the PodMonitor selects the Fleet's pods (the labels Agones puts on
them plus the pod template's own). A renamed port or label would otherwise break scraping or
the announced port silently, on a cluster this machine does not have. The players List the
server keeps is declared.
usage: agones_manifests_test.py SOURCE_DIR"""
import sys

import yaml

# Agones labels every GameServer pod with these (pkg/apis/agones/v1/gameserver.go, podObjectMeta:
# RoleLabel = "agones.dev/role" -> "gameserver", GameServerPodLabel = "agones.dev/gameserver").
AGONES_POD_LABELS = {"agones.dev/role": "gameserver"}

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def main():
    root = sys.argv[1]
    with open(f"{root}/docker/agones/fleet.yaml", encoding="utf-8") as f:
        fleet = yaml.safe_load(f)
    with open(f"{root}/docker/agones/podmonitor.yaml", encoding="utf-8") as f:
        monitor = yaml.safe_load(f)

    check(fleet["kind"] == "Fleet", "fleet.yaml is a Fleet")
    gs = fleet["spec"]["template"]["spec"]
    pod = gs["template"]
    container = next(c for c in pod["spec"]["containers"] if c["name"] == "swarmfield")
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    game_ports = [p["name"] for p in gs["ports"]]
    check(env.get("SWARMFIELD_AGONES_PORT_NAME") in game_ports,
          f"SWARMFIELD_AGONES_PORT_NAME {env.get('SWARMFIELD_AGONES_PORT_NAME')} names a GameServer port {game_ports}")
    game = next(p for p in gs["ports"] if p["name"] == env.get("SWARMFIELD_AGONES_PORT_NAME"))
    check(str(game["containerPort"]) == env.get("SWARMFIELD_PORT"), "the game port's containerPort is SWARMFIELD_PORT")
    check(game.get("protocol") == "TCPUDP", "the game port carries TCP and UDP")
    container_ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    http_port = env.get("SWARMFIELD_HTTP_PORT")
    check("http" in container_ports and str(container_ports["http"]) == http_port,
          f"container port 'http' is SWARMFIELD_HTTP_PORT {http_port}: {container_ports}")
    for probe in ("livenessProbe", "readinessProbe"):
        check(str(container[probe]["httpGet"]["port"]) == http_port, f"{probe} on the operations port")
    check(container["livenessProbe"]["httpGet"]["path"] == "/healthz", "liveness on /healthz")
    check(container["readinessProbe"]["httpGet"]["path"] == "/readyz", "readiness on /readyz")
    check(pod["spec"].get("enableServiceLinks") is False, "enableServiceLinks: false")
    # The players List the server keeps (SWARMFIELD_AGONES_PLAYERS_LIST, default 'players') is
    # declared, with room: the sidecar answers 404 for a List the GameServer lacks.
    players_list = env.get("SWARMFIELD_AGONES_PLAYERS_LIST", "players")
    lists = gs.get("lists") or {}
    check(players_list in lists, f"the GameServer declares the List '{players_list}': {sorted(lists)}")
    check(int((lists.get(players_list) or {}).get("capacity", 0)) > 0, f"the List '{players_list}' has a capacity")

    check(monitor["kind"] == "PodMonitor", "podmonitor.yaml is a PodMonitor")
    pod_labels = dict((pod.get("metadata") or {}).get("labels") or {})
    pod_labels.update(AGONES_POD_LABELS)
    wanted = monitor["spec"]["selector"]["matchLabels"]
    for key, value in wanted.items():
        check(pod_labels.get(key) == value, f"the Fleet's pods carry the PodMonitor's label {key}={value}: {pod_labels}")
    for endpoint in monitor["spec"]["podMetricsEndpoints"]:
        check(endpoint["port"] in container_ports, f"PodMonitor port {endpoint['port']} is a container port")
        check(endpoint.get("path", "/metrics") == "/metrics", "PodMonitor scrapes /metrics")

    for failure in failures:
        print("FAILED:", failure)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
