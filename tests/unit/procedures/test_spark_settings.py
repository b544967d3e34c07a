"""Spark's Ivy settings: where the Neo4j connector is resolved from (no Spark started)."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

from linksim.procedures.spark import ivy_settings
from linksim.server.settings import ServerSettings


def test_ivy_resolves_from_the_servers_maven_repository_alone(tmp_path: Path) -> None:
    central = ServerSettings.from_env({"LINKSIM_HOME": str(tmp_path)}).maven_repository
    mirror = ServerSettings.from_env({"LINKSIM_HOME": str(tmp_path),
                                      "LINKSIM_MAVEN_REPOSITORY": 'https://mirror.example/m2?a=1&b="2"'})
    for repository in (central, mirror.maven_repository):
        settings = ElementTree.fromstring(ivy_settings(tmp_path / 'ivy "cache" & more', repository))
        resolvers = settings.findall("./resolvers/*")
        assert [(r.tag, r.get("name"), r.get("root")) for r in resolvers] == [("ibiblio", "central", repository)]
        assert settings.find("settings").get("defaultResolver") == "central"  # the one chain: no ~/.m2
        assert settings.find("caches").get("defaultCacheDir") == str(tmp_path / 'ivy "cache" & more')
    assert central == "https://repo.maven.apache.org/maven2/"
