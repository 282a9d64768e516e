#!/usr/bin/env python3
"""Questions to a Prometheus server's HTTP API for the cluster tests
(tests/cluster/exporter-tests.sh).

  prom_query.py value URL QUERY       the first sample's value ("" when none)
  prom_query.py labels URL QUERY      the first sample's labels, as JSON
  prom_query.py dashboard URL FILE    every query of a Grafana dashboard,
                                      with its variables set to match all:
                                      one line per query that fails or has
                                      no data, nothing when all have data
  prom_query.py rules URL             "N ok" for N rules loaded and healthy,
                                      else one line per rule that is not

Exit status 0 when the server answered, 1 when it did not or said error.
"""
import json
import re
import sys
import urllib.parse
import urllib.request


def api(url, path, **params):
    q = urllib.parse.urlencode(params)
    with urllib.request.urlopen(f"{url}{path}?{q}", timeout=20) as r:
        doc = json.load(r)
    if doc.get("status") != "success":
        raise RuntimeError(f"{path} {params}: {doc.get('error')}")
    return doc["data"]


def query(url, expr):
    return api(url, "/api/v1/query", query=expr)["result"]


def dashboard_exprs(doc):
    """Every target expr of every panel, rows' panels included."""
    def panels(ps):
        for p in ps:
            yield p
            yield from panels(p.get("panels", []))
    for p in panels(doc.get("panels", [])):
        for t in p.get("targets", []):
            if t.get("expr"):
                yield p.get("title", "?"), t["expr"]


def main(argv):
    mode, url = argv[1], argv[2].rstrip("/")
    try:
        if mode == "value":
            result = query(url, argv[3])
            print(result[0]["value"][1] if result else "")
        elif mode == "labels":
            result = query(url, argv[3])
            print(json.dumps(result[0]["metric"] if result else {}, sort_keys=True))
        elif mode == "dashboard":
            doc = json.load(open(argv[3]))
            names = [v["name"] for v in doc.get("templating", {}).get("list", []) if v.get("type") != "datasource"]
            n = 0
            for title, expr in dashboard_exprs(doc):
                n += 1
                for name in names:
                    expr = re.sub(r"\$\{?" + name + r"\}?\b", ".*", expr)
                try:
                    if not query(url, expr):
                        print(f"{title}: no data for {expr}")
                except Exception as e:  # the query's own error, named
                    print(f"{title}: {expr}: {e}")
            if n == 0:
                print("the dashboard has no queries")
        elif mode == "rules":
            groups = api(url, "/api/v1/rules")["groups"]
            rules = [r for g in groups for r in g["rules"]]
            bad = [f"{r['name']}: {r.get('health')} {r.get('lastError', '')}" for r in rules if r.get("health") != "ok"]
            print("\n".join(bad) if bad else f"{len(rules)} ok")
        else:
            print(f"unknown mode {mode}", file=sys.stderr)
            return 2
    except Exception as e:
        print(f"prometheus at {url}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
