from __future__ import annotations

from collections.abc import Iterator

import pytest
from pg_cluster import Cluster


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    found = Cluster()
    found.start()
    yield found
    found.stop()


@pytest.fixture
def pg_url(cluster: Cluster) -> Iterator[str]:
    """A fresh, empty database of its own for one test."""
    name, url = cluster.new_database()
    yield url
    cluster.drop_database(name)
