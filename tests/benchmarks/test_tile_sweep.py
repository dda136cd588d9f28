"""tile_sweep: variants replace the adapter class's table rows and put them back; one
variant on a generated model runs, matches the table's engine and reports every family."""

from __future__ import annotations

import pytest

from benchmarks.engine.tile_sweep import main, sweep_model, variant
from engine.gpu.kernels import tile_tables
from engine.latency.builder import NetConfig, build_tflite
from engine.latency.space import sample_cells


def test_a_variant_replaces_its_rows_and_restores_them():
    before = (
        dict(tile_tables.GEMM_TILES),
        dict(tile_tables.DEPTHWISE_TILES),
        dict(tile_tables.REDUCE_TILES),
    )
    with variant("gpu", "first table"):
        assert tile_tables.GEMM_TILES["gpu"] == tile_tables.GemmTile(64, 4, 4, shared_k=4)
        assert not any(cls == "gpu" for cls, _, _ in tile_tables.DEPTHWISE_TILES)
        assert tile_tables.reduce_tile("gpu") == tile_tables.ReduceTile(1024, 16)
        assert tile_tables.GEMM_TILES["llvmpipe"] is None  # other classes untouched
    with variant("llvmpipe", "depthwise 2x1"):
        assert tile_tables.depthwise_tile("llvmpipe", 5, 2) == (2, 1)
    assert (
        dict(tile_tables.GEMM_TILES),
        dict(tile_tables.DEPTHWISE_TILES),
        dict(tile_tables.REDUCE_TILES),
    ) == before
    with pytest.raises(ValueError, match="unknown variant"), variant("gpu", "gemm 9x9x9"):
        pass


@pytest.mark.gpu
def test_sweep_runs_variants_on_a_model(tmp_path):
    from tests.helpers.gpu import gpu_context

    gpu_context()  # skips without an adapter
    (cell,) = sample_cells(1, seed=3)
    path = tmp_path / "cell.tflite"
    path.write_bytes(build_tflite(cell, NetConfig(), seed=0))
    report = sweep_model(str(path), ["table", "conv1x1 kernel", "gemm 128x2x2 k8"], "buffer", 1)
    rows = {r["variant"]: r for r in report["rows"]}
    assert set(rows) == {"table", "conv1x1 kernel", "gemm 128x2x2 k8"}
    for r in rows.values():
        assert r["total_gpu_ms"] > 0 and r["run_ms"] > 0 and r["max_abs_diff"] < 1e-4


def test_missing_model_is_one_line(capsys):
    assert main(["no/such.tflite"]) == 2
    assert "no such model: no/such.tflite" in capsys.readouterr().err


def test_unknown_variant_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main([__file__, "--variants", "gemm 9x9x9"])
    assert exc.value.code == 2 and "unknown ['gemm 9x9x9']" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--storage", "tiles"], ["--rounds", "0"]])
def test_bad_options_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main([__file__, *argv])
    assert exc.value.code == 2 and "usage:" in capsys.readouterr().err
