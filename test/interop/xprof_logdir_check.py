# SPDX-License-Identifier: MIT
"""Opens a log directory the way `xprof --logdir <dir>` does and walks it like the XProf UI.

    python xprof_logdir_check.py <logdir>

Builds XProf's own web app in-process, exactly as xprof/server.py's _launch_server does it (the log directory made
absolute by server.get_abs_path, a TBContext, ProfilePluginLoader().load, server.make_wsgi_app), minus the sockets
(no HTTP port, no gRPC worker), and sends the UI's requests through werkzeug's test client:
  GET /data/plugin/profile/runs                                   the sessions XProf lists (ProfilePlugin.generate_runs)
  GET /data/plugin/profile/run_tools?run=R                        the tools of each session
  GET /data/plugin/profile/hosts?run=R&tag=trace_viewer           the hosts of each session (the .xplane.pb stems)
  GET /data/plugin/profile/data?run=R&tag=T&host=H&resolution=0  T: the trace viewer the session lists (trace_viewer@
                                                                  for these files); every event, not a downsample
  GET /data/plugin/profile/data?run=R&tag=overview_page&host=H
Prints one JSON line {"ok", "failures", "runs": [{"run", "tools", "hosts": [{"host", "planes": {process name:
complete events}, "overview": {...}}]}]} on stdout (plane names without the "<host> " prefix trace_viewer@ adds); exits 0 even when checks fail (the caller asserts).
"""
import gzip
import json
import sys
import traceback
from collections import Counter

from werkzeug.test import Client
from xprof import profile_plugin_loader, server
from xprof.standalone import base_plugin, plugin_event_multiplexer

PREFIX = "/data/plugin/profile"


def main():
    logdir = server.get_abs_path(sys.argv[1])
    context = base_plugin.TBContext(
        logdir, plugin_event_multiplexer.DataProvider(logdir), base_plugin.TBContext.Flags(False)
    )
    plugin = profile_plugin_loader.ProfilePluginLoader().load(context)
    client = Client(server.make_wsgi_app(plugin))
    failures = []

    def get(route, **query):
        r = client.get(PREFIX + route, query_string=query)
        data = r.get_data()
        if r.headers.get("Content-Encoding") == "gzip":
            data = gzip.decompress(data)
        text = data.decode("utf-8")
        if r.status_code != 200:
            failures.append(f"{route} {query}: HTTP {r.status_code}: {text[:300]}")
            return None
        return json.loads(text)

    runs = get("/runs") or []
    out = []
    for run in runs:
        tools = get("/run_tools", run=run) or []
        trace_tool = next((t for t in tools if t.startswith("trace_viewer")), None)
        if trace_tool is None:
            failures.append(f"run {run}: no trace viewer in {tools}")
            trace_tool = "trace_viewer"
        hosts = [h["hostname"] for h in get("/hosts", run=run, tag=trace_tool) or []]
        entry = {"run": run, "tools": tools, "hosts": []}
        for host in hosts:
            h = {"host": host, "planes": {}, "overview": {}}
            tv = get("/data", run=run, tag=trace_tool, host=host, resolution="0")
            if tv is not None:
                events = tv["traceEvents"]
                proc = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
                plane = {pid: name.removeprefix(host + " ") for pid, name in proc.items()}
                h["planes"] = dict(Counter(plane.get(e["pid"], "?") for e in events if e.get("ph") == "X"))
            ov = get("/data", run=run, tag="overview_page", host=host)
            if ov is not None:
                # Sections are gviz tables; their "p" properties hold the page's text fields.
                props = {}
                for section in ov if isinstance(ov, list) else [ov]:
                    props.update(section.get("p", {}))
                h["overview"] = {k: props.get(k) for k in ("device_type", "host_count", "device_core_count", "hardware_type", "statement")}
            entry["hosts"].append(h)
        out.append(entry)
    print(json.dumps({"ok": not failures, "failures": failures, "runs": out}))


if __name__ == "__main__":
    try:
        main()
    except Exception:  # noqa: BLE001 - reported to the caller as a failure
        print(json.dumps({"ok": False, "failures": ["exception: " + traceback.format_exc()], "runs": []}))
