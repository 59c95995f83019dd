"""The package as a new user gets it: a built wheel installed into a fresh virtual environment.

The wheel must carry the themes and samples (found through importlib.resources),
the ``piqa-tui`` command must work from it, the TUI must open the bundled
sample, and the sample's workspace must go to the user data folder, never into
the install folder.

The fresh environment gets piqa-tui only from the wheel, whatever this one is (the system Python as
root, a virtual environment, a user install): it is a virtual environment of its own, without system
site-packages, that borrows the third-party libraries of this one through a ``.pth`` file naming
this environment's site directories. Python adds a directory named there to ``sys.path`` without
running the ``.pth`` files inside it, so the editable install's finder
(``__editable___piqa_tui_*_finder``, which maps ``piqa_tui`` to a checkout) never loads; and every
command runs isolated (``-I``) from a temporary folder, so the checkout is never the current one.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import textwrap
import tomllib
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_pyproject_lists_every_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "piqa_tui").rglob("__init__.py")}
    mapped = set(config["package-dir"])
    assert set(config["packages"]) == on_disk | mapped
    assert {"piqa_tui.themes", "piqa_tui.samples", "piqa_tui.prompt_templates"} <= mapped


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with piqa-tui installed from a wheel built from this checkout."""
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(work / "dist"),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    wheel = next((work / "dist").glob("piqa_tui-*.whl"))
    env_dir = work / "env"
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--ignore-installed",
            "-q",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    env_site = next(env_dir.glob("lib/python*/site-packages"))
    (env_site / "borrowed-libraries.pth").write_text("\n".join(library_dirs()) + "\n", encoding="utf-8")
    return env_dir


def library_dirs() -> list[str]:
    """This environment's site directories (and the user's, when Python reads it): the third-party libraries.

    A virtual environment inside the checkout (``.venv``, as a new user makes one) is one of them; only the
    checkout's own source folder is left out, so the wheel's copy is the one the installed command imports."""
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [d for d in dirs if Path(d).is_dir() and Path(d).resolve() != ROOT.resolve()]


def python_in(env_dir: Path) -> list[str]:
    """The environment's Python, isolated: no current folder, no PYTHON* variables, no user site of its own."""
    return [str(env_dir / "bin" / "python"), "-I"]


def fresh_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(
        HOME=str(tmp_path / "home"), XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config")
    )
    env.pop("PIQA_TUI_CONFIG", None)
    return env


def test_wheel_carries_themes_samples_and_templates(installed: Path, tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import piqa_tui
        from piqa_tui.settings.locations import bundled_sample, bundled_themes
        from piqa_tui.core.scoring.templates import shipped_templates
        print(piqa_tui.__file__)
        print(sorted(t.name for t in bundled_themes()))
        print(bundled_sample().is_file())
        templates = shipped_templates()
        print(templates["piqa"].key, len(templates), templates["arab-culture-mcq-ar-region"].language)
        """
    )
    out = subprocess.run(
        [*python_in(installed), "-c", script],
        cwd=tmp_path,
        env=fresh_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    assert out[0].startswith(str(installed)), out[0]  # the wheel's copy, not this checkout
    assert out[1] == "['piqa-dark.toml', 'piqa-high-contrast.toml', 'piqa-light.toml']"
    assert out[2] == "True"
    assert (
        out[3] == "piqa:e3b796518b3402c1 15 ar"
    )  # the prompt templates travel in the wheel (piqa_tui.prompt_templates)


def test_installed_command_gives_the_statistics_of_the_bundled_sample(installed: Path, tmp_path: Path) -> None:
    sample = subprocess.run(
        [
            *python_in(installed),
            "-c",
            "from piqa_tui.settings.locations import bundled_sample; print(bundled_sample())",
        ],
        cwd=tmp_path,
        env=fresh_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    assert sample.startswith(str(installed)), sample  # the wheel's sample, not a checkout's
    done = subprocess.run(
        [str(installed / "bin" / "piqa-tui"), "stats", sample, "--json"],
        cwd=tmp_path,
        env=fresh_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert '"items": ' in done.stdout


def test_installed_tui_opens_the_bundled_sample(installed: Path, tmp_path: Path) -> None:
    """Headless (Pilot): the app the console script runs opens the sample; its workspace lands in XDG_DATA_HOME."""
    script = textwrap.dedent(
        """
        import asyncio, argparse
        from pathlib import Path
        from piqa_tui.cli.open_tui import settings_from
        from piqa_tui.cli.main import tui_parser
        from piqa_tui.tui.app import PiqaApp

        async def main():
            args = tui_parser().parse_args(["--bidi", "app", "--annotator", "newcomer"])
            app = PiqaApp(settings_from(args))
            async with app.run_test(size=(100, 30)) as pilot:
                for _ in range(200):
                    await pilot.pause(0.05)
                    session = getattr(app, "session", None)
                    if session is not None and app.screen.__class__.__name__ == "MainScreen":
                        break
                print(app.screen.__class__.__name__)
                print(len(app.session.project.items))
                print(app.session.project.workspace.path)

        asyncio.run(main())
        """
    )
    env = fresh_env(tmp_path)
    env["PIQA_TUI_CONFIG"] = str(tmp_path / "no-config.toml")
    done = subprocess.run(
        [*python_in(installed), "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    screen, count, workspace = done.stdout.splitlines()[-3:]
    assert screen == "MainScreen"
    assert int(count) > 10
    assert workspace.startswith(str(tmp_path / "data")), workspace
    site = next(installed.glob("lib/python*/site-packages"))
    assert not list(site.rglob("*.piqa.sqlite*"))  # nothing written into the install folder
