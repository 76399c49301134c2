"""Project asynchronous parameter-server training to 8-64 workers and 1-8 ps tasks.

    python benchmarks/bench_distributed.py --only small,heavy > dist.jsonl
    python benchmarks/scaling_model.py dist.jsonl [--svg scaling.svg] [--bandwidth 1.25e9]

Inputs: the ``scaling_inputs_<model>`` JSON lines of bench_distributed.py, measured on
one machine: ``compute_s`` (one step of the model in one process), ``bytes_per_step``
(parameters pulled plus gradients pushed by one trainer step), ``rpc_latency_s`` (the
fixed cost of a step's RPCs), ``bandwidth_bytes_per_s`` and ``largest_share`` (the
largest variable's share of the bytes).

The model, one trainer and one ps per machine, every ps on its own network link::

    trainer step      t_w = compute + latency + bytes / bandwidth
    ps work per step  t_ps(P) = ps_cpu + max(1 / P, largest_share) * bytes / bandwidth
    global steps/s    rate(W, P) = min(W / t_w, 1 / t_ps(P))

Every trainer step touches every ps task (each holds some of the variables), so a ps
handles one pull and one push per global step whatever P is: ``ps_cpu`` (by default
half the measured latency, the server's side of the round trips) does not shrink with
more ps tasks; only the bytes do, and only down to the largest variable, which one
task must hold whole unless it is partitioned. Below ``W* = t_w / t_ps(P)`` workers the
rate grows linearly; from W* on the busiest ps is the bottleneck and the rate stays at
``1 / t_ps(P)``. Asynchronous training only: sync replicas add the wait for the slowest
of W trainers, which this model leaves out.

Output: one JSON line per (model, workers, ps) with the projected steps/s, the linear
ideal ``W / t_w``, their ratio and the bound (``workers`` or ``ps``), then one line per
(model, ps) with W*; ``--table`` prints the same as text, ``--svg`` draws steps/s against
workers, one curve per ps count plus 8 ps with every variable partitioned (no plotting
library needed).

Example
-------
>>> inputs = {"compute_s": 0.001, "bytes_per_step": 1e6, "rpc_latency_s": 0.0005,
...           "bandwidth_bytes_per_s": 1e9, "largest_share": 0.5}
>>> round(project(inputs, workers=8, ps=1)["steps_per_s"], 1)
800.0
>>> round(ps_bottleneck(inputs, ps=1), 2)
2.0
"""

from __future__ import annotations

import argparse
import json
import sys

WORKERS = (1, 2, 4, 8, 16, 32, 64)
PS_TASKS = (1, 2, 4, 8)
PS_CPU_SHARE = 0.5  # the ps's share of a step's RPC latency


def trainer_step_s(inputs: dict) -> float:
    """One trainer's step time without contention: compute plus its RPCs."""
    return (inputs["compute_s"] + inputs["rpc_latency_s"]
            + inputs["bytes_per_step"] / inputs["bandwidth_bytes_per_s"])


def ps_step_s(inputs: dict, ps: int) -> float:
    """The busiest ps task's work per global step."""
    share = max(1.0 / ps, inputs.get("largest_share", 0.0))
    return (PS_CPU_SHARE * inputs["rpc_latency_s"]
            + share * inputs["bytes_per_step"] / inputs["bandwidth_bytes_per_s"])


def ps_bottleneck(inputs: dict, ps: int) -> float:
    """W*: the number of workers from which the ps tasks limit the global rate."""
    return trainer_step_s(inputs) / ps_step_s(inputs, ps)


def project(inputs: dict, workers: int, ps: int) -> dict:
    """Projected global steps/s of `workers` async trainers with `ps` ps tasks."""
    linear = workers / trainer_step_s(inputs)
    ceiling = 1.0 / ps_step_s(inputs, ps)
    rate = min(linear, ceiling)
    return {"workers": workers, "ps": ps, "steps_per_s": rate, "linear": linear,
            "efficiency": rate / linear, "bound": "workers" if linear <= ceiling else "ps"}


def read_inputs(lines) -> dict:
    """``{model: inputs}`` from bench_distributed.py's ``scaling_inputs_*`` lines."""
    found = {}
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        row = json.loads(line)
        if str(row.get("name", "")).startswith("scaling_inputs_"):
            found[row["name"][len("scaling_inputs_"):]] = row
    if not found:
        raise ValueError("scaling_model: no scaling_inputs_<model> line in the input; run "
                         "benchmarks/bench_distributed.py --only small,heavy and pass "
                         "its output")
    return found


def svg(curves: dict, title: str, width: int = 640, height: int = 400) -> str:
    """A log-log line plot: `curves` maps a label to [(workers, steps/s), ...]."""
    import math

    left, right, top, bottom = 70, 170, 40, 50
    xs = [x for pts in curves.values() for x, _ in pts]
    ys = [y for pts in curves.values() for _, y in pts if y > 0]
    x0, x1 = math.log2(min(xs)), math.log2(max(xs))
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    if y1 == y0:
        y1 += 1

    def px(x, y):
        u = left + (math.log2(x) - x0) / max(x1 - x0, 1e-9) * (width - left - right)
        v = height - bottom - (math.log10(y) - y0) / (y1 - y0) * (height - top - bottom)
        return f"{u:.1f},{v:.1f}"

    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#555555"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle">{title}</text>']
    for x in sorted(set(xs)):
        u, v = px(x, 10 ** y0).split(",")
        out.append(f'<text x="{u}" y="{float(v) + 18}" text-anchor="middle">{x}</text>')
    for e in range(y0, y1 + 1):
        u, v = px(min(xs), 10 ** e).split(",")
        right_end = px(max(xs), 10 ** e).split(",")[0]
        out.append(f'<line x1="{u}" y1="{v}" x2="{right_end}" y2="{v}" stroke="#ddd"/>')
        out.append(f'<text x="{float(u) - 6}" y="{float(v) + 4}" '
                   f'text-anchor="end">{10 ** e:g}</text>')
    out.append(f'<text x="{(left + width - right) / 2}" y="{height - 10}" '
               'text-anchor="middle">workers</text>')
    out.append(f'<text x="15" y="{height / 2}" transform="rotate(-90 15 {height / 2})" '
               'text-anchor="middle">global steps/s</text>')
    for i, (label, pts) in enumerate(curves.items()):
        color = colors[i % len(colors)]
        dash = ' stroke-dasharray="5,4"' if label.startswith("linear") else ""
        path = " ".join(px(x, y) for x, y in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" '
                   f'stroke-width="2"{dash}/>')
        out.append(f'<text x="{width - right + 10}" y="{top + 20 + 18 * i}" '
                   f'fill="{color}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="?", default="-",
                        help="bench_distributed.py's output (default: stdin)")
    parser.add_argument("--bandwidth", type=float, default=None,
                        help="bytes/s of each machine's link instead of the measured "
                             "loopback figure (10 Gb/s Ethernet: 1.25e9)")
    parser.add_argument("--latency", type=float, default=None,
                        help="RPC latency per step in seconds instead of the measured one")
    parser.add_argument("--table", action="store_true", help="also print a text table")
    parser.add_argument("--svg", default=None, help="write the plot of --plot-model here")
    parser.add_argument("--plot-model", default="small")
    args = parser.parse_args(argv)
    stream = sys.stdin if args.inputs == "-" else open(args.inputs)
    with stream:
        models = read_inputs(stream)
    for inputs in models.values():
        if args.bandwidth:
            inputs["bandwidth_bytes_per_s"] = args.bandwidth
        if args.latency is not None:
            inputs["rpc_latency_s"] = args.latency
    for model, inputs in models.items():
        for ps in PS_TASKS:
            for w in WORKERS:
                row = project(inputs, w, ps)
                print(json.dumps({"name": "scaling", "model": model, **{
                    k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}}))
        for ps in PS_TASKS:
            print(json.dumps({"name": "scaling_ps_bottleneck", "model": model, "ps": ps,
                              "workers": round(ps_bottleneck(inputs, ps), 2),
                              "ceiling_steps_per_s": round(1 / ps_step_s(inputs, ps), 2)}))
        if args.table:
            print(f"\n{model}: global steps/s (ps-bound marked *); linear = "
                  f"{1 / trainer_step_s(inputs):.1f} x workers", file=sys.stderr)
            print("ps \\ workers " + "".join(f"{w:>9}" for w in WORKERS), file=sys.stderr)
            for ps in PS_TASKS:
                cells = []
                for w in WORKERS:
                    row = project(inputs, w, ps)
                    mark = "*" if row["bound"] == "ps" else " "
                    cells.append(f"{row['steps_per_s']:>8.0f}{mark}")
                print(f"{ps:>12} " + "".join(cells), file=sys.stderr)
    if args.svg:
        inputs = models[args.plot_model]
        curves = {f"{ps} ps": [(w, project(inputs, w, ps)["steps_per_s"]) for w in WORKERS]
                  for ps in PS_TASKS}
        split = dict(inputs, largest_share=0.0)  # every variable partitioned over the ps
        curves["8 ps, partitioned"] = [(w, project(split, w, 8)["steps_per_s"])
                                       for w in WORKERS]
        curves["linear"] = [(w, w / trainer_step_s(inputs)) for w in WORKERS]
        with open(args.svg, "w") as f:
            f.write(svg(curves, f"{args.plot_model} model: projected async steps/s"))


if __name__ == "__main__":
    main()
