"""The transport of a sync: the ``git`` command, run as a subprocess on the dataset's repository.

git is the well-kept distributed engine the teams' data already lives in (GitHub, Hugging Face dataset
repositories, a lab server's bare repository, a shared folder): append-only history, offline commits, any
transport (ssh, https, a path), access control by the host. Every call is ``git -C REPO ...`` without a shell,
with a time limit, no terminal prompt (``GIT_TERMINAL_PROMPT=0``, ssh in batch mode unless the user configured
ssh for git), and its failure turned into one line saying what to do; nothing here ever discards a commit or a
file (a merge that fails is aborted back to the commit it started from).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from piqa_tui.core.errors import PiqaError

LOCAL_SECONDS = 60.0  # a git command that touches only this disk
NETWORK_SECONDS = 180.0  # fetch and push
STOP_POLL_SECONDS = 0.1  # how often a git command that may be stopped looks at its stop signal
IGNORE_RULE = "*.piqa.sqlite*"  # the workspace, its -wal, -shm and backups: never committed
ATTRIBUTES_RULE = ".piqa/** binary -filter"
_OFFLINE = (
    "could not read from remote",
    "does not appear to be a git repository",
    "could not resolve host",
    "unable to access",
    "connection refused",
    "connection timed out",
    "network is unreachable",
    "no route to host",
    "timed out",
)
_AUTH = ("authentication failed", "permission denied", "could not read username", "terminal prompts disabled")
_UNDER_WAY = {  # what git leaves in its folder while an operation waits for the user
    "MERGE_HEAD": "a merge",
    "rebase-merge": "a rebase",
    "rebase-apply": "a rebase",
    "CHERRY_PICK_HEAD": "a cherry-pick",
    "REVERT_HEAD": "a revert",
}
# Someone pushed first: refused as not a fast-forward, or the remote's ref moved while this push updated it.
_REJECTED = ("[rejected]", "non-fast-forward", "fetch first", "failed to update ref", "cannot lock ref")


class GitError(PiqaError):
    """git refused or failed: one line naming the repository and what to do; nothing local was lost."""


class Unreachable(GitError):
    """The remote did not answer (offline, wrong address, refused credentials): the work waits, committed."""


class Stopped(GitError):
    """The sync was stopped from outside (the app is closing): git was ended, what was committed stays."""


@dataclass(frozen=True)
class Repository:
    """A git work tree and the branch it is on."""

    root: Path
    branch: str
    stop: threading.Event | None = None  # set: a fetch or push under way ends at once (``Stopped``)

    def git(self, *args: str, network: bool = False, check: bool = True) -> subprocess.CompletedProcess[str]:
        """A git command; one that talks to the remote (``network``) has longer and ends when ``stop`` is set (one
        on this disk alone always finishes: ending it could leave git's locks behind)."""
        if network:
            return run_git(self.root, args, NETWORK_SECONDS, check, self.stop)
        return run_git(self.root, args, LOCAL_SECONDS, check)

    def remote(self) -> str | None:
        """The branch's remote (``branch.NAME.remote``), else ``origin`` when there is one, else None."""
        configured = self.git("config", "--get", f"branch.{self.branch}.remote", check=False).stdout.strip()
        if configured:
            return configured
        remotes = self.git("remote").stdout.split()
        return "origin" if "origin" in remotes else None

    def tracking(self, remote: str) -> str:
        return f"refs/remotes/{remote}/{self.branch}"

    def has(self, ref: str) -> bool:
        return self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False).returncode == 0

    def ensure_rules(self) -> None:
        """The root ``.gitignore`` keeps the workspaces out (``IGNORE_RULE``) and ``.gitattributes`` keeps the batches
        plain binary blobs (``ATTRIBUTES_RULE``: no end-of-line conversion, no LFS filter even where a Hugging Face
        repository tracks ``*.gz`` with LFS); each added when missing."""
        for name, rule, why in (
            (".gitignore", IGNORE_RULE, "piqa-tui workspaces: each machine's own, never shared"),
            (".gitattributes", ATTRIBUTES_RULE, "piqa-tui sync batches: binary, stored as they are"),
        ):
            path = self.root / name
            text = path.read_text(encoding="utf-8") if path.is_file() else ""
            if rule not in text.splitlines():
                prefix = "" if not text or text.endswith("\n") else "\n"
                path.write_text(f"{text}{prefix}# {why}\n{rule}\n", encoding="utf-8")

    def commit(self, paths: Sequence[Path], message: str) -> bool:
        """Commit exactly ``paths`` (those that exist, new or changed), nothing else staged; False when nothing changed."""
        names = [os.fspath(path.relative_to(self.root)) for path in paths if path.exists()]
        if not names:
            return False
        self.git("add", "--all", "--", *names)
        if self.git("diff", "--cached", "--quiet", "--", *names, check=False).returncode == 0:
            return False
        self.git("commit", "--quiet", "--no-verify", "-m", message, "--only", "--", *names)
        return True

    def fetch(self, remote: str) -> None:
        self.git("fetch", "--quiet", "--no-tags", remote, network=True)

    def merge_in(self, ref: str) -> None:
        """Merge ``ref`` into the branch; on any failure the merge is aborted (the branch as it was) and one line
        says what to do."""
        done = self.git("merge", "--quiet", "--no-edit", ref, check=False)
        if done.returncode == 0:
            return
        self.git("merge", "--abort", check=False)
        said = last_line(done)
        if "would be overwritten" in done.stderr or "untracked working tree files" in done.stderr:
            what = "files the team changed have changes here not committed: commit them (git commit) or set them aside (git stash)"
        elif "unrelated histories" in done.stderr:
            what = "this repository and its remote share no history: clone the team's repository and sync from there"
        else:
            what = "merge it by hand (git merge) or ask the lead"
        raise GitError(
            f"{self.root}: merging the team's work failed ({said}): {what}, then sync again; your work is committed here"
        )

    def push(self, remote: str) -> bool:
        """Push the branch; False when the remote has commits this one lacks (someone pushed first)."""
        done = self.git("push", "--quiet", remote, f"HEAD:refs/heads/{self.branch}", network=True, check=False)
        if done.returncode == 0:
            return True
        if any(word in done.stderr.lower() for word in _REJECTED):
            return False
        refused = [line.strip() for line in done.stderr.splitlines() if "[remote rejected]" in line]
        if refused:  # a hook or a protected branch on the remote
            raise GitError(
                f"{self.root}: the remote refused the push ({refused[0][:200]}): ask whoever keeps the repository; "
                "your work is committed here and the next sync pushes it"
            )
        raise failure(self.root, ("push",), done)

    def uncommitted(self, path: Path) -> str | None:
        """Why ``path`` is not as committed: "not committed" (untracked), "changed since its last commit", or None."""
        status = self.git("status", "--porcelain", "--", os.fspath(path.relative_to(self.root))).stdout
        if status.startswith("??"):
            return "not committed"
        return "changed since its last commit" if status.strip() else None

    def blob(self, name: str) -> str | None:
        """The id of the committed version of the file ``name`` (a path in the repository) at HEAD; None: none."""
        found = self.git("rev-parse", "--verify", "--quiet", f"HEAD:{name}", check=False)
        return found.stdout.strip() or None if found.returncode == 0 else None

    def missing_on(self, ref: str, folder: Path) -> list[str]:
        """The files under ``folder`` committed here that the commit ``ref`` lacks (all of them without ``ref``)."""
        name = os.fspath(folder.relative_to(self.root))
        here = set(self.git("ls-tree", "-r", "--name-only", "HEAD", "--", name, check=False).stdout.splitlines())
        if not self.has(ref):
            return sorted(here)
        there = set(self.git("ls-tree", "-r", "--name-only", ref, "--", name).stdout.splitlines())
        return sorted(here - there)


def work_tree_of(path: Path) -> Path | None:
    """The git work tree holding ``path``: the nearest folder above it with a ``.git`` (a folder, or the file of a
    linked work tree or submodule); None outside any. A few file system looks, no git command."""
    try:
        start = path.resolve().parent
    except (OSError, RuntimeError):
        return None
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def commit_saved(paths: Sequence[Path], action: str) -> str | None:
    """After ``action`` (a save) rewrote ``paths`` (the dataset file and its companions): commit exactly those in
    their git repository, with the rules that keep the workspaces out (``.gitignore``), so the next sync shares
    them. One line saying what was committed, or why not (a repository not ready: the file stays saved, only not
    committed); None outside any git repository or when git holds these contents already."""
    root = work_tree_of(paths[0]) if paths else None
    if root is None:
        return None
    names = ", ".join(path.name for path in paths)
    try:
        repo = open_repository(root)
        inside = [path.resolve() for path in paths if path.resolve().is_relative_to(repo.root.resolve())]
        if not inside:
            return None
        repo.ensure_rules()
        where = ", ".join(path.relative_to(repo.root.resolve()).as_posix() for path in inside)
        if not repo.commit(
            [*inside, repo.root / ".gitignore", repo.root / ".gitattributes"], f"piqa-tui {action}: {where}"
        ):
            return None
        head = repo.git("rev-parse", "--short", "HEAD").stdout.strip()
    except GitError as exc:
        return f"{names} saved, not committed to git: {exc}"
    return f"committed {where} ({head}) in {repo.root}: the next piqa-tui sync shares it with the team"


def open_repository(folder: Path, stop: threading.Event | None = None) -> Repository:
    """The repository holding ``folder``, checked to be ready for a sync: on a branch, no merge, rebase, cherry-pick
    or revert under way. ``GitError`` saying what to do otherwise. ``stop``: set, it ends the repository's git
    commands (the app closing while a sync waits on the network)."""
    found = run_git(folder, ("rev-parse", "--show-toplevel"), LOCAL_SECONDS, check=False)
    if found.returncode != 0:
        raise GitError(
            f"{folder} is in no git repository: clone the team's repository (git clone URL) and open the dataset "
            "there, or make one (git init, git remote add origin URL); nothing was synced"
        )
    root = Path(found.stdout.strip())
    asked = [arg for marker in _UNDER_WAY for arg in ("--git-path", marker)]
    paths = run_git(root, ("rev-parse", *asked), LOCAL_SECONDS).stdout.splitlines()
    for path, what in zip(paths, _UNDER_WAY.values(), strict=True):
        if (root / path).exists():
            raise GitError(
                f"{root} is in the middle of {what}: finish it (git status says how) or abort it "
                f"(git {what.split()[-1]} --abort), then sync again; nothing was synced"
            )
    branch = run_git(root, ("symbolic-ref", "--quiet", "--short", "HEAD"), LOCAL_SECONDS, check=False)
    if branch.returncode != 0:
        raise GitError(
            f"{root} is on no branch (a detached HEAD): go back to the team's branch (git switch main), "
            "then sync again; nothing was synced"
        )
    return Repository(root, branch.stdout.strip(), stop)


def run_git(
    root: Path, args: Sequence[str], seconds: float, check: bool = True, stop: threading.Event | None = None
) -> subprocess.CompletedProcess[str]:
    """``git -C root args``: no shell, no prompt, a time limit, and ended when ``stop`` is set; with ``check`` a
    failure is one ``GitError``. git runs in a process group of its own, so ending it ends what it started too (an
    ssh waiting on the network, which would otherwise hold git's output open)."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    if "GIT_SSH_COMMAND" not in env and "GIT_SSH" not in env:
        env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes -o ConnectTimeout=30"
    argv = ["git", "-C", os.fspath(root), *args]
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            env=env,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise GitError(
            "the git command is not installed: install git (apt install git, brew install git, git-scm.com), "
            "then sync again; nothing was synced"
        ) from None
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        try:
            out, err = process.communicate(timeout=max(0.0, min(left, STOP_POLL_SECONDS) if stop else left))
            break
        except subprocess.TimeoutExpired:
            stopped = stop is not None and stop.is_set()
            if not stopped and time.monotonic() < deadline:
                continue
            _end(process)
            if stopped:
                raise Stopped(
                    f"{root}: the sync was stopped (git {args[0]} ended); what it committed stays, the next sync "
                    "finishes it"
                ) from None
            raise Unreachable(f"{root}: git {args[0]} took over {seconds:g} s and was stopped") from None
    done = subprocess.CompletedProcess(argv, process.returncode, out, err)
    if check and done.returncode != 0:
        raise failure(root, args, done)
    return done


def _end(process: subprocess.Popen[str]) -> None:
    """End git and every process of its group (an ssh it started), then collect it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.communicate()


def failure(root: Path, args: Sequence[str], done: subprocess.CompletedProcess[str]) -> GitError:
    """git's failure as one line: an unreachable remote or refused credentials as ``Unreachable``."""
    said = last_line(done)
    lowered = done.stderr.lower()
    if any(word in lowered for word in _AUTH):
        return Unreachable(f"the remote refused the credentials ({said}): check your ssh key or token")
    if any(word in lowered for word in _OFFLINE):
        return Unreachable(f"the remote did not answer ({said})")
    if "please tell me who you are" in lowered or "empty ident" in lowered:
        return GitError(
            f"{root}: git does not know who you are: git config --global user.name 'NAME' and "
            "git config --global user.email 'EMAIL', then sync again; nothing was lost"
        )
    return GitError(f"{root}: git {args[0]} failed ({said}); nothing was lost")


def last_line(done: subprocess.CompletedProcess[str]) -> str:
    """git's last line of complaint, short and on one line."""
    lines = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()]
    text = lines[-1] if lines else f"exit status {done.returncode}"
    return text[:200]
