"""Scrapes workloadmapd's /metrics and checks its workload series with
prometheus_client's text parser (the reference parser of the format).

    check_metrics.py URL NAMESPACE present|absent|limited

present: the seed demo of NAMESPACE has its series (info, phase, status,
replicas, GPUs requested, the three pods' join series). absent: it has none.
limited: the scrape holds at most 5 workload series and counts the others
as dropped. Exits 1 saying what is wrong; a scrape the parser refuses fails.
"""

import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def scrape(url):
    with urllib.request.urlopen(url, timeout=10) as answer:
        text = answer.read().decode("utf-8")
    samples = []
    for family in text_string_to_metric_families(text):
        samples.extend(family.samples)
    return samples


def find(samples, metric, labels):
    return [s for s in samples if s.name == metric and all(s.labels.get(k) == v for k, v in labels.items())]


def main():
    url, namespace, mode = sys.argv[1:4]
    samples = scrape(url)
    demo = {"namespace": namespace, "kind": "JobSet", "name": "demo"}
    problems = []

    def expect(metric, value, **labels):
        labels.update(demo)
        found = find(samples, metric, labels)
        if len(found) != 1:
            problems.append(f"{metric} {labels}: {len(found)} series")
        elif found[0].value != value:
            problems.append(f"{metric} {labels}: {found[0].value}, expected {value}")

    workload_series = [s for s in samples if s.name.startswith("workloadmap_workload_") or s.name in (
        "workloadmap_component_replicas", "workloadmap_pod_workload_info")]
    if mode == "present":
        expect("workloadmap_workload_info", 1, definition="jobset-x-k8s-io-jobset-v1alpha2")
        expect("workloadmap_workload_phase", 1, phase="Running")
        expect("workloadmap_workload_phase", 0, phase="Failed")
        expect("workloadmap_workload_status", 1, status="Running")
        expect("workloadmap_component_replicas", 3, component="replicatedjob", state="ready")
        expect("workloadmap_workload_resource_requests", 12, component="replicatedjob",
               resource="nvidia_com_gpu", unit="integer")
        pods = find(samples, "workloadmap_pod_workload_info", {"namespace": namespace, "workload_name": "demo"})
        if sorted(p.labels["instance"] for p in pods) != ["leader", "worker", "worker"]:
            problems.append(f"pod join series: {[p.labels for p in pods]}")
        if not find(samples, "workloadmap_workload_view_age_seconds", demo):
            problems.append("no view age")
    elif mode == "absent":
        left = [s for s in workload_series if s.labels.get("namespace") == namespace]
        if left:
            problems.append(f"{len(left)} series of a deleted workload, e.g. {left[0]}")
    elif mode == "limited":
        counted = [s for s in workload_series if s.name != "workloadmap_workload_series_dropped_total"]
        dropped = find(samples, "workloadmap_workload_series_dropped_total", {})
        if len(counted) > 5:
            problems.append(f"{len(counted)} workload series over a limit of 5")
        if len(dropped) != 1 or dropped[0].value <= 0:
            problems.append(f"dropped series not counted: {dropped}")
    else:
        problems.append(f"unknown mode {mode}")
    for problem in problems:
        print(f"check_metrics {mode}: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
