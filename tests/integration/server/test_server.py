"""The provisioned Neo4j: schema, authentication, ports, Browser, persistence across restarts."""

from __future__ import annotations

import json
import urllib.request
import uuid
from pathlib import Path

import pytest
from neo4j.exceptions import ConstraintError

from linksim.cli.main import main
from linksim.errors import LinksimError
from linksim.procedures import QueryRunner, apply_schema
from linksim.server import Connection, LocalServer, ServerError, ServerSettings


def test_schema_applied_twice_is_idempotent(runner: QueryRunner) -> None:
    first = apply_schema(runner)
    constraints = runner.run("SHOW CONSTRAINTS YIELD name RETURN name ORDER BY name")
    indexes = runner.run("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name")
    second = apply_schema(runner)

    assert first["constraints_added"] == 6 and first["indexes_added"] >= 3
    names = {r["name"] for r in indexes}
    assert {"page_host", "page_pagerank", "linksim_run_algorithm"} <= names and "similar_to_run" not in names
    assert second["constraints_added"] == 0 and second["indexes_added"] == 0
    assert runner.run("SHOW CONSTRAINTS YIELD name RETURN name ORDER BY name") == constraints
    assert {r["name"] for r in constraints} == {"page_url", "host_name", "linksim_run_id", "linksim_current_algorithm", "linksim_lock_name",
                                                 "linksim_counter_name"}
    assert len(runner.run("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name")) == len(indexes)
    # The constraint is really there: a second page with the same URL is refused.
    runner.write("CREATE (:Page {url: $url})", {"url": "https://example.org/"})
    with pytest.raises(ConstraintError):
        runner.write("CREATE (:Page {url: $url})", {"url": "https://example.org/"})


def test_cli_init_twice_reports_nothing_added(runner, cli_env, capsys) -> None:
    assert main(["neo4j", "init"]) == 0
    assert "6 constraints" in capsys.readouterr().out
    assert main(["neo4j", "init"]) == 0
    out = capsys.readouterr().out
    assert "0 constraints and 0 indexes added" in out
    assert cli_env.uri in out


def test_wrong_password_is_rejected(neo4j_server, tmp_path, capsys) -> None:
    good = neo4j_server.connection
    bad = Connection(good.uri, good.user, good.password + "-wrong", good.database, "option")
    with pytest.raises(LinksimError, match="refused the credentials"):
        QueryRunner.connect(bad)

    password_file = tmp_path / "password"
    password_file.write_text("not-the-password\n")
    password_file.chmod(0o600)
    code = main(["neo4j", "init", "--uri", good.uri, "--password-file", str(password_file)])
    err = capsys.readouterr().err
    assert code == 3  # the README's exit code of a server that refuses the credentials
    assert "refused the credentials" in err and "Traceback" not in err


def test_browser_answers_http_200(neo4j_server) -> None:
    if neo4j_server.http_url is None:
        pytest.skip("the external server given by NEO4J_URI has no NEO4J_HTTP_URL set")
    with urllib.request.urlopen(f"{neo4j_server.http_url}/browser/", timeout=30) as response:
        body = response.read().decode("utf-8", errors="replace")
        assert response.status == 200
    assert "<title>Neo4j Browser</title>" in body


def _local(neo4j_server) -> LocalServer:
    if neo4j_server.local is None:
        pytest.skip(f"the server was provisioned by {neo4j_server.kind}, not as a local server")
    return neo4j_server.local


def test_taken_port_gives_a_clear_error(neo4j_server, tmp_path, monkeypatch, capsys) -> None:
    taken = int(neo4j_server.connection.uri.rsplit(":", 1)[1])
    other = LocalServer(ServerSettings(home=tmp_path, instance="other", bolt_port=taken, http_port=1))
    try:
        with pytest.raises(ServerError, match=f"port {taken} on 127.0.0.1 .* already in use"):
            other.start()
    finally:
        other.stop()  # never leave a server behind should the check ever let one start

    monkeypatch.setenv("LINKSIM_HOME", str(tmp_path))
    code = main(["neo4j", "start", "--bolt-port", str(taken)])
    err = capsys.readouterr().err
    assert code == 1
    assert f"port {taken} on 127.0.0.1 (for Bolt) is already in use" in err
    assert "--bolt-port" in err and "Traceback" not in err


def test_stop_start_keeps_data(neo4j_server, runner) -> None:
    server = _local(neo4j_server)
    marker = str(uuid.uuid4())
    runner.write("CREATE (:Page {url: $url})", {"url": marker})

    assert server.stop() is True
    assert not server.is_running()
    assert server.status().running is False
    status, started = server.start()
    assert started and status.running

    with QueryRunner.connect(neo4j_server.connection) as fresh:
        found = fresh.run("MATCH (p:Page {url: $url}) RETURN count(p) AS n", {"url": marker})
    assert found == [{"n": 1}]


def test_a_restarted_server_maps_its_class_data_archive(neo4j_server) -> None:
    """A class path's second start writes the JVM's class-data archive when the server exits; the
    starts after it load the server's classes from it (the JVM maps the file)."""
    server = _local(neo4j_server)
    archive = server.class_data(server.java())
    for _ in range(3):  # the session's server has started once at least; this ends its dump
        server.stop()
        server.start()
        if archive.exists():
            break
    assert archive.stat().st_size > 10_000_000  # a whole archive, not a cut file
    mapped = {line.split()[-1] for line in Path(f"/proc/{server.pid()}/maps").read_text().splitlines()}
    assert str(archive) in mapped


def test_start_when_running_says_so(neo4j_server, monkeypatch, capsys) -> None:
    server = _local(neo4j_server)
    monkeypatch.setenv("LINKSIM_INSTANCE", server.settings.instance)
    monkeypatch.setenv("LINKSIM_BOLT_PORT", str(server.settings.bolt_port))
    monkeypatch.setenv("LINKSIM_HTTP_PORT", str(server.settings.http_port))
    assert main(["neo4j", "start"]) == 0
    assert "Already running." in capsys.readouterr().out


def test_status_json_reports_the_running_server(neo4j_server, monkeypatch, capsys) -> None:
    server = _local(neo4j_server)
    monkeypatch.setenv("LINKSIM_INSTANCE", server.settings.instance)
    assert main(["neo4j", "status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert {"running", "uri", "http_url", "user", "password_file", "version"} <= status.keys()
    assert status["running"] is True
    assert status["uri"] == neo4j_server.connection.uri
    assert status["version"].startswith("5.26.")
    assert status["password_file"] == str(server.settings.password_file)
    assert (server.settings.password_file.stat().st_mode & 0o777) == 0o600


def test_local_connection_is_resolved_from_the_password_file(neo4j_server, monkeypatch) -> None:
    server = _local(neo4j_server)
    for var in ("NEO4J_URI", "NEO4J_PASSWORD", "NEO4J_PASSWORD_FILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LINKSIM_INSTANCE", server.settings.instance)
    from linksim.server import resolve_connection

    conn = resolve_connection()
    assert conn.source == "local" and conn.uri == server.status().uri
    with QueryRunner.connect(conn) as runner:
        assert runner.run("RETURN 1 AS one") == [{"one": 1}]


def test_a_first_start_whose_password_begins_with_a_dash(neo4j_server, tmp_path, monkeypatch) -> None:
    """One new server in 64 gets a password beginning with '-': the admin tool must take it as the
    password, not as an option (seeded, so the case is met every time)."""
    import random

    from linksim.server import credentials, local

    for seed in range(10_000):
        if credentials.generate_password(random.Random(seed).randbytes).startswith("-"):
            break
    monkeypatch.setattr(local, "generate_password",
                        lambda: credentials.generate_password(random.Random(seed).randbytes))
    other = LocalServer(ServerSettings(home=tmp_path, instance="dash", bolt_port=_free_port(),
                                       http_port=_free_port(), heap="512m", pagecache="64m"))
    try:
        status, started = other.start()
        assert started and status.running
        assert other.password().startswith("-")
        with QueryRunner.connect(Connection(status.uri, "neo4j", other.password(), "neo4j", "local")) as fresh:
            assert fresh.run("RETURN 1 AS one") == [{"one": 1}]
    finally:
        other.stop()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_local_server_has_linksims_procedures_and_plugin_builds_them_for_another(
        neo4j_server, runner, tmp_path, monkeypatch, capsys) -> None:
    """`linksim neo4j start` compiled linksim.related against the server's jars and installed it;
    `linksim neo4j plugin --out DIR` gives the same jar for a server of one's own."""
    import zipfile

    from linksim.procedures.runs import related_procedure

    server = _local(neo4j_server)
    assert related_procedure(runner)
    installed = sorted(p.name for p in server.settings.plugins_dir.glob("linksim-procedures-*.jar"))
    assert len(installed) == 1
    monkeypatch.setenv("LINKSIM_INSTANCE", server.settings.instance)
    assert main(["neo4j", "plugin", "--out", str(tmp_path / "out")]) == 0
    assert str(tmp_path / "out" / installed[0]) in capsys.readouterr().out
    with zipfile.ZipFile(tmp_path / "out" / installed[0]) as jar:
        assert "io/linksim/Related.class" in jar.namelist() and jar.testzip() is None
