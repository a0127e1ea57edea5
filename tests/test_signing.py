"""Ed25519 signatures: measure signs every manifest update, build signs each report's
SHA256SUMS, and once a project declares a key, verify, check, build and a resumed measure
refuse data that is unsigned, signed by another key, or forged (a record edited and its
hash recomputed in the manifest: exactly what a plain hash list let through)."""

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

from sitegen.build import build_site, render_site
from sitegen.cli import main
from sitegen.errors import DataError, IntegrityError
from sitegen.init_project import init_project
from sitegen.measure import run_campaign
from sitegen.records.layout import MANIFEST_FILE, RECORDS_FILE
from sitegen.records.verify import verify_campaign
from sitegen.signing import (
    KEY_ENV,
    PUBLIC_KEY_FILE,
    Signer,
    init_keys,
    load_signer,
    project_key,
    read_public_key,
    sign_existing,
    signed_at,
)
from tests.conftest import make_plan
from tests.sitefixtures import (
    publishable_campaign,
    published_file,
    published_folder,
    read_records,
    write_records,
)


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
    with mock.patch("os.fsync"), mock.patch("sitegen.signing.datetime") as clock:
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
