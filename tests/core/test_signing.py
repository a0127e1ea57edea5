"""Ed25519 signatures: measure signs every manifest update, build signs each report's
SHA256SUMS, and once a project declares a key, verify, check, build and a resumed measure
refuse data that is unsigned, signed by another key, or forged (a record edited and its
hash recomputed in the manifest: exactly what a plain hash list let through). The key is
pinned by its fingerprint in mkdocs.yml: a key file removed or replaced is refused, not a
reason to stop checking; ``keys init`` signs the campaigns already there."""

from __future__ import annotations

import base64
import json
import os
import stat
from datetime import datetime
from pathlib import Path
from unittest import mock

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from sitegen.cli import main
from sitegen.commands.build import build_site, render_site
from sitegen.commands.init_project import init_project
from sitegen.core.errors import ConfigError, DataError, IntegrityError
from sitegen.core.signing import (
    KEY_ENV,
    PUBLIC_KEY_FILE,
    Signer,
    declared_fingerprint,
    init_keys,
    load_signer,
    project_key,
    public_key_line,
    read_public_key,
    signed_at,
)
from sitegen.core.site_settings import read_site_settings
from sitegen.measure import run_campaign
from sitegen.records.layout import MANIFEST_FILE, PLAN_FILE, RECORDS_FILE
from sitegen.records.verify import sign_existing, verify_campaign
from tests.builtsites import published_file, published_folder, rendered_page, rendered_reports
from tests.conftest import make_plan
from tests.sitefixtures import publishable_campaign, read_records, write_records


@pytest.fixture
def keyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Signer]:
    """A project with a key: the private key in a config directory of its own."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(KEY_ENV, raising=False)
    project = tmp_path / "project"
    init_project(project)
    private, public, _ = init_keys(project)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert not private.is_relative_to(project) and public == project / PUBLIC_KEY_FILE
    signer = load_signer(project)
    assert signer is not None and signer.path == private
    return project, signer


def forge(directory: Path) -> None:
    """Change a figure in a record consistently and recompute its hash in the manifest."""
    records = read_records(directory / RECORDS_FILE)
    ok = next(r for r in records if r["status"] == "ok" and r["metrics"]["gen_tps"])
    ok["metrics"]["gen_tps"] *= 2
    write_records(directory / RECORDS_FILE, records)


def test_measure_signs_every_manifest_and_a_forgery_is_refused(keyed, tmp_path):
    project, signer = keyed
    with mock.patch("os.fsync"):
        result = run_campaign(make_plan(), tmp_path / "data", signer=signer)
    directory = result.directory
    assert (directory / f"{MANIFEST_FILE}.sig").is_file()
    key = project_key(project)
    verify_campaign(directory, public_key=key)
    forge(directory)
    verify_campaign(directory)  # a plain hash list cannot tell
    with pytest.raises(DataError) as caught:
        verify_campaign(directory, public_key=key)
    (issue,) = caught.value.issues
    assert (
        issue.location == str(directory / MANIFEST_FILE)
        and "changed after it was signed" in issue.message
    )
    # Resuming must not sign the forgery anew.
    with pytest.raises(IntegrityError, match="changed after it was signed"), mock.patch("os.fsync"):
        run_campaign(make_plan(), tmp_path / "data", signer=signer)


def test_a_measure_with_nothing_new_keeps_the_signature_and_its_date(keyed, tmp_path):
    _, signer = keyed
    with mock.patch("os.fsync"):
        directory = run_campaign(make_plan(), tmp_path / "data", signer=signer).directory
    signature = directory / f"{MANIFEST_FILE}.sig"
    before = (directory / MANIFEST_FILE).read_bytes(), signature.read_bytes()
    earlier = json.loads(before[1])["signed_at"]
    # A second later the date would differ, were the manifest signed again.
    with mock.patch("os.fsync"), mock.patch("sitegen.core.signing.datetime") as clock:
        clock.now.return_value.isoformat.return_value = "2099-01-01T00:00:00+00:00"
        result = run_campaign(make_plan(), tmp_path / "data", signer=signer)
    assert result.directory == directory
    assert ((directory / MANIFEST_FILE).read_bytes(), signature.read_bytes()) == before
    assert json.loads(signature.read_bytes())["signed_at"] == earlier


@pytest.mark.slow  # publishes a site
def test_build_refuses_unsigned_and_foreign_data_and_signs_its_sums(keyed, tmp_path, monkeypatch):
    project, signer = keyed
    directory = publishable_campaign(tmp_path / "data").parent
    with pytest.raises(DataError) as caught:
        render_site(tmp_path / "data", project)
    assert any(i.rule == "C-SIGNED" and "unsigned" in i.message for i in caught.value.issues)
    # Signed by another key: refused, naming both keys.
    other = Signer(Ed25519PrivateKey.generate(), tmp_path / "other.pem")
    sign_existing(directory, other)
    with pytest.raises(DataError) as caught:
        render_site(tmp_path / "data", project)
    assert any(f"signed by key {other.fingerprint}" in i.message for i in caught.value.issues)
    (directory / f"{MANIFEST_FILE}.sig").unlink()
    # Signed once with the project's key, the campaign builds; the date is on the method page.
    sign_existing(directory, signer)
    monkeypatch.chdir(project)
    result = build_site(tmp_path / "data", tmp_path / "site", project, version="v1")
    version = tmp_path / "site" / "v" / result.version
    (slug,) = [p.name for p in (version / "reports").iterdir()]
    downloads = published_folder(version, f"reports/{slug}/downloads")
    sums = downloads["SHA256SUMS"].read_bytes()
    signature = json.loads(downloads["SHA256SUMS.sig"].read_text())
    assert signature["key"] == signer.fingerprint
    read_public_key(published_file(version, PUBLIC_KEY_FILE)).verify(
        base64.b64decode(signature["signature"]), sums
    )
    # Dated by the report's latest record, not the clock: the same data, the same bytes.
    latest = max(r["started_at"] for r in read_records(directory / RECORDS_FILE))
    assert signature["signed_at"] == datetime.fromisoformat(latest).isoformat(timespec="seconds")
    method = next(version.glob("en/reports/*/method/index.html")).read_text()
    assert signer.fingerprint in method
    assert signed_at(directory / MANIFEST_FILE)[:10] in method
    # verify through the command line names the file of a forgery.
    forge(directory)
    assert main(["verify", str(directory), "--project", str(project)]) == 1


def test_a_project_key_without_the_private_key_is_a_clear_refusal(keyed, monkeypatch, tmp_path):
    project, _ = keyed
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "elsewhere"))
    with pytest.raises(Exception, match="declares a signing key .* but none is configured"):
        load_signer(project)
    other = tmp_path / "other.pem"
    other.write_bytes(Signer(Ed25519PrivateKey.generate(), other).private_key.private_bytes_raw())
    monkeypatch.setenv(KEY_ENV, os.fspath(other))
    with pytest.raises(Exception, match="not an unencrypted PEM private key"):
        load_signer(project)


# A project pins its key by its fingerprint in mkdocs.yml: a key file that goes missing or
# is replaced must not turn the checks off.


def signed_project(keyed, tmp_path: Path) -> tuple[Path, Path, Path]:
    """``keyed``'s project with one campaign signed by its key: (project, data, campaign)."""
    project, signer = keyed
    directory = publishable_campaign(tmp_path / "data").parent
    sign_existing(directory, signer)
    return project, tmp_path / "data", directory


def test_keys_init_declares_the_fingerprint_in_mkdocs_yml_and_keeps_the_rest(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(KEY_ENV, raising=False)
    project = tmp_path / "project"
    init_project(project)
    before = (project / "mkdocs.yml").read_text(encoding="utf-8")
    _, _, print_ = init_keys(project)
    after = (project / "mkdocs.yml").read_text(encoding="utf-8")
    assert after.startswith(before) and f'signing_key: "{print_}"' in after
    assert declared_fingerprint(project) == print_
    assert read_site_settings(project).signing_key == print_
    # A second init replaces nothing, whichever file is left.
    with pytest.raises(ConfigError, match="already declares a key"):
        init_keys(project)
    (project / PUBLIC_KEY_FILE).unlink()
    with pytest.raises(ConfigError, match=f"mkdocs.yml declares signing_key {print_}"):
        init_keys(project)
    assert (project / "mkdocs.yml").read_text(encoding="utf-8") == after


def test_a_project_that_declared_its_key_refuses_to_run_without_the_key_file(
    keyed, tmp_path, capsys
):
    project, data, directory = signed_project(keyed, tmp_path)
    assert main(["check", "--data", str(data), "--project", str(project)]) == 0
    capsys.readouterr()
    (project / PUBLIC_KEY_FILE).unlink()
    for command in (
        ["check", "--data", str(data), "--project", str(project)],
        ["verify", str(directory), "--project", str(project)],
    ):
        assert main(command) == 1
        (line,) = capsys.readouterr().err.splitlines()
        assert f"{project / PUBLIC_KEY_FILE} is missing" in line
        assert f"{project / 'mkdocs.yml'} declares signing_key" in line
    with pytest.raises(ConfigError, match="keys/signing.pub is missing, but .*mkdocs.yml"):
        build_site(data, tmp_path / "site", project, version="v1")
    assert not (tmp_path / "site").exists()


def test_a_key_file_replaced_by_another_key_is_refused(keyed, tmp_path, capsys):
    project, data, directory = signed_project(keyed, tmp_path)
    _, signer = keyed
    # Another key, and the campaign signed anew with it: only the declaration tells.
    other = Signer(Ed25519PrivateKey.generate(), tmp_path / "other.pem")
    (project / PUBLIC_KEY_FILE).write_text(public_key_line(other.public_key))
    (directory / f"{MANIFEST_FILE}.sig").unlink()
    sign_existing(directory, other)
    assert main(["check", "--data", str(data), "--project", str(project)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert f"holds key {other.fingerprint}" in line
    assert f"mkdocs.yml declares signing_key {signer.fingerprint}" in line
    with pytest.raises(ConfigError, match=f"holds key {other.fingerprint}"):
        build_site(data, tmp_path / "site", project, version="v1")


def test_a_key_file_without_a_declaration_keeps_working_and_check_says_how_to_declare_it(
    keyed, tmp_path, capsys
):
    project, data, _ = signed_project(keyed, tmp_path)
    _, signer = keyed
    config = project / "mkdocs.yml"
    config.write_text(
        "".join(
            line
            for line in config.read_text(encoding="utf-8").splitlines(keepends=True)
            if not line.startswith("signing_key:")
        ),
        encoding="utf-8",
    )
    assert declared_fingerprint(project) is None
    assert main(["check", "--data", str(data), "--project", str(project)]) == 0
    out = capsys.readouterr().out
    assert f'add `signing_key: "{signer.fingerprint}"` to it' in out


def test_a_declaration_that_is_not_a_fingerprint_is_refused_naming_the_setting(tmp_path):
    project = tmp_path / "project"
    init_project(project)
    with (project / "mkdocs.yml").open("a", encoding="utf-8") as config:
        config.write("signing_key: my-key\n")
    with pytest.raises(ConfigError, match=r"mkdocs.yml → signing_key: 'my-key' is not a key"):
        project_key(project)


def test_keys_init_signs_the_campaigns_already_there_and_check_then_passes(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(KEY_ENV, raising=False)
    project, data = tmp_path / "project", tmp_path / "data"
    init_project(project)
    directory = publishable_campaign(data).parent
    assert main(["keys", "init", "--project", str(project), "--data", str(data)]) == 0
    out = capsys.readouterr().out
    assert f"signed {directory / MANIFEST_FILE}.sig" in out
    assert main(["check", "--data", str(data), "--project", str(project)]) == 0


def test_keys_init_names_the_command_for_a_campaign_it_cannot_sign(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(KEY_ENV, raising=False)
    project, data = tmp_path / "project", tmp_path / "data"
    init_project(project)
    directory = publishable_campaign(data).parent
    with (directory / PLAN_FILE).open("a", encoding="utf-8") as plan:
        plan.write(" ")  # no longer the plan its manifest lists
    assert main(["keys", "init", "--project", str(project), "--data", str(data)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"not signed: {directory}: ")
    assert line.endswith(f"run `sitegen keys sign {directory}`")
    assert not (directory / f"{MANIFEST_FILE}.sig").exists()
    assert (project / PUBLIC_KEY_FILE).is_file()  # the key is made all the same


def test_an_unsigned_campaign_is_refused_naming_the_command_that_signs_it(keyed, tmp_path):
    project, _ = keyed
    directory = publishable_campaign(tmp_path / "data").parent
    with pytest.raises(DataError) as caught:
        render_site(tmp_path / "data", project)
    (issue,) = [i for i in caught.value.issues if i.rule == "C-SIGNED"]
    assert issue.message.startswith("unsigned: no manifest.json.sig")
    assert issue.message.endswith(f"sign it once with `sitegen keys sign {directory}`")


def test_the_method_page_gives_the_fingerprint_to_pin_and_the_audit_command(keyed, tmp_path):
    project, data, _ = signed_project(keyed, tmp_path)
    _, signer = keyed
    rendered = render_site(data, project)
    rendered.scratch.cleanup()
    (slug,) = rendered_reports(rendered)
    command = f"<code>sitegen audit SITE --key {signer.fingerprint}</code>"
    for path, pin in (
        ("method.en.md", "pin this fingerprint"),
        ("method.md", "フィンガープリント"),
    ):
        page = rendered_page(rendered, f"reports/{slug}/{path}")
        assert command in page and pin in page
