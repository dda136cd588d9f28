"""Ours: the dispatch-level predictor (nn-Meter's kernel-level idea on our own kernels).

latency = run overhead + per-dispatch overhead x dispatches + scale x sum over the
dispatch list of t_family(dispatch) + t_io(the io conversions), where
- the dispatch list is what the engine would record for the model on the adapter
  (engine.latency.dispatches: fusion, kernel choice, work groups, storage kinds);
- t_family is one small non-negative linear model per kernel family (conv2d,
  conv1x1, pool2d, concat, slice, mean, fully_connected, binary, io, ...) over the
  dispatch's static costs: FEATURES below. "Serial" terms divide by the groups that
  run side by side, min(work groups, the adapter's parallel units): a layer of 1 work
  group on lavapipe's 2 threads takes twice the time of the same work in 2;
- fitting, when the dataset has per-dispatch GPU times (Engine.profile timestamps):
  each family on its own dispatches (weighted to relative error), then the three
  model-level terms on the measured totals; without them, all coefficients at once
  from the totals (the sum of the per-family features is linear in them);
- a family never seen in training falls back to the "generic" model fitted on all
  dispatches;
- a dispatch measured in training (the same kernel, shapes, work groups and storage:
  `signature`, its place in the model aside) is priced at its median profiled time
  there (`measured`), not by its family's model, where that pays: fit on half the
  training models, it predicts the other half's labels better than the family models
  by a clear margin (`measured_pays`: 20% less error; on lavapipe, whose per-dispatch
  timestamps are noisy, the two are within 2% of each other, and the families stay). On a GPU one family's time is not
  linear in its costs: the H100's 3x3 convolutions were 0.27-1.55x their family model
  (waves of work groups over the SMs, tiles), while the same dispatch in another cell
  took 0.96-1.05x its median; NAS cells share their layer shapes, so 5% of the cells
  cover 99.7% of the other cells' dispatches (docs/latency.md). Only the models'
  dispatches go in (a generated single layer runs alone, off the cache its neighbours
  leave: its time is not that of the same dispatch inside a model);
- the io conversions (hwc_to_phwc4 per input, phwc4_to_hwc per output) are not
  profiled (Engine.profile times the model's dispatches only), and with them go the
  upload and the readback the wall clock holds: t_io = io_ms_per_mb x the MB they move,
  a model-level term fitted on the totals. Every NAS cell has the same input and
  output, so cells alone cannot tell it from the run overhead (it is then left out, 0);
  the generated single-layer models (`kernels`; 573 distinct io sets on lavapipe) can:
  their totals fit it (with overhead and scale terms of their own), then the other
  three terms are fitted on the cells alone with it taken off. Before this term the io
  conversions took the "generic" model, fitted on convolutions, whose work-group term
  priced face detection's three conversions at 0.93 ms (0.05-0.1 ms of copying).
Evaluation is plain Python over a few dozen coefficients: no numpy needed to predict.
"""

from __future__ import annotations

import json

from engine.latency.dispatches import DispatchInfo
from engine.latency.predictors.base import Predictor, Sample, lstsq_nonneg

FEATURES = ("one", "mflops", "serial_mflops", "mb_read", "mb_written", "serial_mb",
            "kgroups")  # fmt: skip
GENERIC = "generic"
MIN_FAMILY = 8  # dispatches a family needs for a model of its own


IO = "io"  # DispatchInfo.op_type of the input/output conversions
IO_MIN_SPREAD = 1.1  # largest / smallest io MB in the fit below which t_io is left out


def family(d: DispatchInfo) -> str:
    return d.kernel


def io_mb(d: DispatchInfo) -> float:
    return (d.bytes_read + d.bytes_written) / 1e6


def signature(d: DispatchInfo) -> str:
    """What a dispatch does, whatever its place in the model: every field but op_index."""
    return json.dumps(d.to_list()[1:], separators=(",", ":"))


def features(d: DispatchInfo, units: int) -> list[float]:
    par = max(1, min(d.group_count, units))
    mflops = d.flops / 1e6
    mb = (d.bytes_read + d.bytes_written) / 1e6
    return [1.0, mflops, mflops / par, d.bytes_read / 1e6, d.bytes_written / 1e6, mb / par,
            d.group_count / 1e3]  # fmt: skip


def _dot(w: list[float], x: list[float]) -> float:
    return sum(a * b for a, b in zip(w, x, strict=True))


class DispatchLevel(Predictor):
    kind = "dispatch"

    def __init__(self, params=None, meta=None, units: int | None = None):
        super().__init__(params, meta)
        if units is not None:
            self.params.setdefault("units", units)

    @property
    def units(self) -> int:
        return int(self.params.get("units") or 1)

    def kernel_ms(self, d: DispatchInfo) -> float:
        """Predicted time of one dispatch on its own (before the model-level scale): its
        median where it was measured in training, else its family's model."""
        measured = self.params.get("measured")
        if measured:
            ms = measured.get(signature(d))
            if ms is not None:
                return ms
        fams = self.params["families"]
        w = fams.get(family(d)) or fams[GENERIC]
        return max(0.0, _dot(w, features(d, self.units)))

    def dispatch_ms(self, d: DispatchInfo) -> float:
        """One dispatch's share of the prediction (ms), its per-dispatch overhead included."""
        p = self.params
        if d.op_type == IO and "io_ms_per_mb" in p:  # files fitted before it: as kernels
            return p["per_dispatch"] + p["io_ms_per_mb"] * io_mb(d)
        return p["per_dispatch"] + p["scale"] * self.kernel_ms(d)

    def breakdown(self, sample: Sample) -> list[float]:
        """Each dispatch's share of the prediction (ms), overheads included."""
        return [self.dispatch_ms(d) for d in sample.dispatches]

    def predict(self, sample: Sample) -> float:
        return self.params["per_run"] + sum(self.breakdown(sample))

    def fit(self, samples: list[Sample], kernels: list[Sample] = (),
            measured: bool | None = None) -> DispatchLevel:  # fmt: skip
        """Fit on `samples` (models); `kernels`: generated single-layer models whose
        profiled dispatches only add to the per-family data (engine.latency.kernels);
        `measured`: price dispatches seen in training at their measured median (None:
        where `measured_pays`)."""
        import numpy as np

        units = self.units
        profiled = all(s.dispatch_ms for s in samples)
        self.params.update(units=units, profiled=profiled, kernel_models=len(kernels))
        if profiled:
            self.params["families"] = family_models(samples, kernels, units)
            if measured is None:
                check = measured_check(samples, kernels, units)
                self.params["measured_check"] = check
                measured = pays(check)
            self.params["measured"] = measured_dispatches(samples) if measured else {}
            per_run, per_dispatch, scale, io = self._fit_model_level(
                samples, [k for k in kernels if k.y]
            )
            self.params["io_ms_per_mb"] = io
        else:
            fams_seen = sorted({family(d) for s in samples for d in s.dispatches})
            cols = [(f, j) for f in fams_seen for j in range(len(FEATURES))]
            index = {c: i for i, c in enumerate(cols)}
            a = np.zeros((len(samples), len(cols) + 1))
            a[:, -1] = 1.0
            for r, s in enumerate(samples):
                for d in s.dispatches:
                    for j, v in enumerate(features(d, units)):
                        a[r, index[(family(d), j)]] += v
            y = np.array([s.y for s in samples])
            coef = lstsq_nonneg(a, y, 1 / y)
            fams = {
                f: [float(coef[index[(f, j)]]) for j in range(len(FEATURES))] for f in fams_seen
            }
            # unseen families: the mean of the seen ones
            fams[GENERIC] = [
                float(np.mean([w[j] for w in fams.values()])) for j in range(len(FEATURES))
            ]
            self.params["families"] = fams
            self.params.pop("io_ms_per_mb", None)  # io is priced as a family here
            self.params.pop("measured", None)
            per_run, per_dispatch, scale = float(coef[-1]), 0.0, 1.0
        self.params.update(per_run=float(per_run), per_dispatch=float(per_dispatch),
                           scale=float(scale), features=list(FEATURES))  # fmt: skip
        return self

    def adapted(self, samples: list[Sample]) -> DispatchLevel:
        """This predictor carried to another adapter class with a few of its profiled
        models (`samples`): each family's model and each measured dispatch scaled by the
        family's median ratio of the new class's dispatch times to this predictor's (all
        families' median for a family the samples lack), the new class's own measured
        dispatches where they pay (`measured_pays`), then the model-level terms refitted
        on the samples."""
        import numpy as np

        ratios: dict[str, list] = {}
        for s in samples:
            for d, ms in zip(s.dispatches, s.dispatch_ms or [], strict=False):
                if ms is not None and d.op_type != IO and self.kernel_ms(d) > 0:
                    ratios.setdefault(family(d), []).append(ms / self.kernel_ms(d))
        if not ratios:
            raise ValueError("adaptation needs profiled models of the new class")
        every = float(np.median([r for rs in ratios.values() for r in rs]))
        scale = {f: float(np.median(rs)) for f, rs in ratios.items()}
        p = DispatchLevel(units=self.units)
        p.params.update(self.params)
        p.params["families"] = {f: [w * scale.get(f, every) for w in ws]
                                for f, ws in self.params["families"].items()}  # fmt: skip
        measured = {}
        for key, ms in self.params.get("measured", {}).items():
            measured[key] = ms * scale.get(json.loads(key)[1], every)  # [1]: the kernel
        if measured_pays(samples, (), self.units):
            measured.update(measured_dispatches(samples))
        p.params["measured"] = measured
        old_io = self.params.get("io_ms_per_mb", 0.0) * every
        per_run, per_dispatch, fitted_scale, io = p._fit_model_level(samples, [])
        if io == 0.0 and old_io > 0.0:  # the samples' io sizes cannot tell it: carry it over
            per_run, per_dispatch, fitted_scale, io = p._fit_model_level(samples, [], old_io)
        p.params.update(per_run=per_run, per_dispatch=per_dispatch, scale=fitted_scale,
                        io_ms_per_mb=io)  # fmt: skip
        p.meta = {
            **self.meta,
            "adapted_from": self.meta.get("adapter"),
            "adapted_with": len(samples),
        }
        return p

    def _fit_model_level(self, samples: list[Sample], kernels: list[Sample],
                         io: float | None = None) -> tuple:  # fmt: skip
        """(per_run, per_dispatch, scale, io_ms_per_mb), weighted to relative error.
        io_ms_per_mb first, from `samples` and `kernels` together where io sizes vary
        (else 0), each group with its own per-run / per-dispatch / scale columns (a
        single layer's io MB grows with its kernel time: shared columns would let a
        difference in scale between the groups pass for io cost); then the other three
        from `samples` alone, their io time taken off. `io` given: taken as it is."""
        import numpy as np

        def terms(s: Sample) -> list[float]:
            kernel = sum(self.kernel_ms(d) for d in s.dispatches if d.op_type != IO)
            moved = sum(io_mb(d) for d in s.dispatches if d.op_type == IO)
            return [1.0, len(s.dispatches), kernel, moved]

        rows, kernel_rows = [terms(s) for s in samples], [terms(k) for k in kernels]
        moved = np.array([r[3] for r in rows + kernel_rows])
        if io is None:  # fitted where the io sizes vary, else left out
            io = 0.0
            if moved.max() > 0 and moved.min() < moved.max() / IO_MIN_SPREAD:
                zeros = [0.0, 0.0, 0.0]
                a = np.array([r[:3] + zeros + r[3:] for r in rows]
                             + [zeros + r for r in kernel_rows])  # fmt: skip
                y = np.array([s.y for s in [*samples, *kernels]])
                io = float(lstsq_nonneg(a, y, 1 / y)[6])
        a, y = np.array(rows), np.array([s.y for s in samples])
        per_run, per_dispatch, scale = lstsq_nonneg(a[:, :3], y - io * a[:, 3], 1 / y)
        return float(per_run), float(per_dispatch), float(scale), io


def measured_dispatches(samples: list[Sample]) -> dict[str, float]:
    """signature -> median profiled ms of that dispatch over the models that ran it."""
    import numpy as np

    times: dict[str, list] = {}
    for s in samples:
        for d, ms in zip(s.dispatches, s.dispatch_ms or [], strict=False):
            if ms is not None and d.op_type != IO:
                times.setdefault(signature(d), []).append(ms)
    return {k: round(float(np.median(v)), 6) for k, v in sorted(times.items())}


def family_models(samples: list[Sample], kernels: list[Sample], units: int) -> dict:
    """Per family (and "generic"), the non-negative linear model of its profiled dispatch
    times over FEATURES, weighted to relative error."""
    import numpy as np

    xs: dict[str, list] = {}
    ys: dict[str, list] = {}
    for s in [*samples, *(k for k in kernels if k.dispatch_ms)]:
        for d, ms in zip(s.dispatches, s.dispatch_ms, strict=True):
            if ms is None:
                continue
            for key in (family(d), GENERIC):
                xs.setdefault(key, []).append(features(d, units))
                ys.setdefault(key, []).append(ms)
    fams = {}
    for key, x in xs.items():
        if len(x) >= MIN_FAMILY or key == GENERIC:
            y = np.array(ys[key])
            fams[key] = lstsq_nonneg(x, y, 1 / np.maximum(y, 1e-3)).tolist()
    return fams


MEASURED_GAIN = 0.8  # the measured dispatches must cut the check's error by 20% or more


def measured_check(samples: list[Sample], kernels: list[Sample], units: int) -> dict:
    """Fitted on every other training model, the mean relative error (%) on the rest's
    label (`y`) of the family models alone and with the measured dispatches ({} for fewer
    than 4 models)."""
    if len(samples) < 4:
        return {}
    fit_on, check = samples[::2], samples[1::2]
    errors = {}
    for name, flag in (("families", False), ("measured", True)):
        p = DispatchLevel(units=units).fit(fit_on, kernels, measured=flag)
        errors[name] = 100 * sum(abs(p.predict(s) - s.y) / s.y for s in check) / len(check)
    return errors


def pays(check: dict) -> bool:
    """Do the measured dispatches pay (`measured_check`: at least 20% less error than the
    family models)? A near tie keeps the family models, which carry to unseen shapes."""
    return bool(check) and check["measured"] < MEASURED_GAIN * check["families"]


def measured_pays(samples: list[Sample], kernels: list[Sample], units: int) -> bool:
    return pays(measured_check(samples, kernels, units))
