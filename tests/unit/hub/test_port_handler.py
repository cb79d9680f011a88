import pytest

from gpuportal_spawner.port_handler import parse_port


def test_only_a_port_is_accepted():
    assert parse_port({"port": 8888}) == 8888


@pytest.mark.parametrize(
    "body",
    [
        {"port": 8888, "exec_prefix": "touch /tmp/pwned;"},
        {"batch_query_cmd": "id"},
        {"port": "8888"},
        {"port": True},
        {"port": 0},
        {"port": 70000},
        [8888],
        None,
    ],
)
def test_anything_else_is_refused(body):
    with pytest.raises(ValueError):
        parse_port(body)
