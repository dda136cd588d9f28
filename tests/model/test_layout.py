import pytest

from engine.errors import ModelError
from engine.model.layout import phwc4_bytes, phwc4_shape, texture_extent


@pytest.mark.parametrize(
    ("shape", "bhwc"),
    [
        ((), (1, 1, 1, 1)),
        ((7,), (1, 1, 1, 7)),
        ((3, 5), (1, 1, 3, 5)),
        ((2, 3, 5), (1, 2, 3, 5)),
        ((1, 8, 9, 3), (1, 8, 9, 3)),
        ((2, 4, 6, 10), (2, 4, 6, 10)),
    ],
)
def test_phwc4_shape(shape, bhwc):
    assert phwc4_shape(shape) == bhwc


@pytest.mark.parametrize(
    ("shape", "bpe", "nbytes"),
    [
        ((1, 8, 9, 3), 4, 8 * 9 * 4 * 4),  # 3 channels pad to one slice of 4
        ((1, 8, 9, 4), 2, 8 * 9 * 4 * 2),
        ((1, 8, 9, 5), 4, 8 * 9 * 8 * 4),  # 5 channels: two slices
        ((2, 4, 6, 10), 2, 2 * 4 * 6 * 12 * 2),
        ((7,), 4, 8 * 4),
        ((), 4, 16),
    ],
)
def test_phwc4_bytes(shape, bpe, nbytes):
    assert phwc4_bytes(shape, bpe) == nbytes


@pytest.mark.parametrize(
    ("shape", "extent"),
    [
        ((1, 8, 9, 3), (9, 8, 1)),
        ((2, 4, 6, 10), (6, 8, 3)),  # batch stacks rows: height = H * B
        ((3, 5), (3, 1, 2)),
        ((7,), (1, 1, 2)),
    ],
)
def test_texture_extent(shape, extent):
    assert texture_extent(shape) == extent


@pytest.mark.parametrize("shape", [(1, 2, 3, 4, 5), (1, -1, 4, 4)])
def test_unmappable_shapes_name_the_shape(shape):
    with pytest.raises(ModelError, match=r"shape \["):
        phwc4_shape(shape)
