"""A hanging test fails fast with its name (pytest-timeout), instead of stalling the whole suite."""

import subprocess
import sys
import textwrap


def test_the_suite_runs_with_a_per_test_timeout(request):
    assert request.config.pluginmanager.hasplugin("timeout"), "pytest-timeout is not installed (requirements-test.txt)"
    assert float(request.config.getini("timeout")) == 60


def test_a_hanging_test_fails_with_its_name(tmp_path):
    (tmp_path / "test_hang.py").write_text(
        textwrap.dedent(
            """
            import threading

            def test_hangs_forever():
                threading.Event().wait()
            """
        )
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "timeout=1", str(tmp_path / "test_hang.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert run.returncode != 0
    assert "test_hangs_forever" in run.stdout
    assert "Timeout" in run.stdout
