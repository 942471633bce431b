"""Tests of hone.py, the Python client of hone's trial protocol.

Run with ``python3 -m unittest discover -s clients/python -v``. Standard
library only.

Most tests talk to FakeHone, a small server in a thread that implements the
hone side of the protocol of wire/doc.go on a real Unix socket: it checks
every message the client sends (hello with token and trial id, reports in
turn, finite metrics, checkpoints inside the staging directory, saved
answers only after a checkpoint directive), commits reported checkpoints by
moving them out of the staging directory as hone does, and answers with a
scripted sequence of directives or with deliberately bad messages. Tests
that need a real process (exit status, standard output, the example
scripts) run one with the same environment hone sets.
"""

import contextlib
import io
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest
from typing import Any, Dict, List, Optional, Tuple
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hone  # noqa: E402

EXAMPLES = os.path.join(HERE, "..", "..", "examples", "python")

TOKEN = "5ec7e7c0ffee0123456789abcdef0123"
TRIAL_ID = "0a1b2c3d"

# How long FakeHone waits for the client before giving up, so a client bug
# fails a test instead of hanging it.
TIMEOUT = 30.0


def _reject_constant(name: str) -> Any:
    raise ValueError("non-finite number %s" % name)


class FakeHone:
    """The hone side of one trial's connection, on a real Unix socket.

    script lists what to answer to reports, in order; once it is used up
    every report gets "continue". An item is an action string ("continue",
    "checkpoint", "stop"), a (action, reason) tuple, a dict sent as a
    message as it is, bytes sent raw, or None to close the connection
    without answering. After a "checkpoint" directive the
    server waits for the saved answer and goes on with the next item; after
    an item that is not a directive (an injected bad answer) it only waits
    for the client to go away.
    """

    def __init__(
        self, test: unittest.TestCase, script: Any = (), welcome: Optional[Any] = None, tcp: bool = False
    ) -> None:
        self.root = tempfile.mkdtemp(prefix="hone-test-")
        test.addCleanup(shutil.rmtree, self.root, True)
        self.socket_path = os.path.join(self.root, "hone.sock")
        self.trial_dir = os.path.join(self.root, "trial")
        self.staging = os.path.join(self.trial_dir, ".staging")
        self.storage = os.path.join(self.root, "storage")
        os.makedirs(self.trial_dir)
        os.makedirs(self.storage)
        self.script = list(script)
        self.welcome = welcome

        self.hello: Optional[Dict[str, Any]] = None
        self.reports: List[Dict[str, Any]] = []
        self.saved: List[Dict[str, Any]] = []
        self.committed: List[str] = []  # storage paths, in order
        self.violations: List[str] = []  # protocol errors of the client
        self.connections = 0

        if tcp:
            # What a trial on another machine gets: hone's TCP address.
            self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.listener.bind(("127.0.0.1", 0))
            self.socket_path = "tcp://127.0.0.1:%d" % self.listener.getsockname()[1]
        else:
            self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.listener.bind(self.socket_path)
        self.listener.listen(4)
        self.closing = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        test.addCleanup(self.close)

    def env(self, **extra: str) -> Dict[str, str]:
        """Return the environment hone gives the trial, updated with extra."""
        env = {
            "HONE_PROTOCOL": "1",
            "HONE_SOCKET": self.socket_path,
            "HONE_TOKEN": TOKEN,
            "HONE_TRIAL_ID": TRIAL_ID,
            "HONE_TRIAL_DIR": self.trial_dir,
            "HONE_STAGING_DIR": self.staging,
            "HONE_RESTORE_DIR": "",
            "HONE_ITERATION": "0",
            "HONE_CONFIG": "{}",
            "CUDA_VISIBLE_DEVICES": "",
        }
        env.update(extra)
        return env

    def finish(self) -> None:
        """Wait until the client has gone and the server thread ended."""
        self.closing.set()
        self.thread.join(TIMEOUT)
        if self.thread.is_alive():
            raise AssertionError("FakeHone still serving after %gs" % TIMEOUT)
        # A second connection would still wait in the listener's queue.
        self.listener.settimeout(0)
        try:
            extra, _ = self.listener.accept()
        except OSError:
            pass
        else:
            extra.close()
            self.connections += 1

    def close(self) -> None:
        """Close the listener."""
        self.listener.close()

    # The server thread.

    def _serve(self) -> None:
        # Poll, so that finish() can end a wait for a client that never
        # connects; a connection already queued is still accepted.
        self.listener.settimeout(0.05)
        waited = 0.0
        while True:
            try:
                conn, _ = self.listener.accept()
                break
            except socket.timeout:
                waited += 0.05
                if self.closing.is_set() or waited > TIMEOUT:
                    return
            except OSError:
                return
        self.connections += 1
        conn.settimeout(TIMEOUT)
        with conn:
            try:
                self._session(conn, conn.makefile("rb"))
            except (OSError, ValueError) as e:
                self.violations.append("server: %s" % e)

    def _send(self, conn: socket.socket, msg: Any) -> None:
        data = msg if isinstance(msg, bytes) else json.dumps(msg).encode() + b"\n"
        conn.sendall(data)

    def _reject(self, conn: socket.socket, why: str) -> None:
        self.violations.append(why)
        self._send(conn, {"type": "error", "message": why})

    def _recv(self, conn: socket.socket, reader: Any) -> Optional[Any]:
        """Read one message; None at EOF or after rejecting a bad one."""
        line = reader.readline(hone.MAX_MESSAGE_SIZE + 1)
        if not line:
            return None
        if len(line) > hone.MAX_MESSAGE_SIZE:
            self._reject(conn, "message over %d bytes" % hone.MAX_MESSAGE_SIZE)
            return None
        if not line.endswith(b"\n"):
            self._reject(conn, "message not terminated by a newline")
            return None
        try:
            msg = json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
        except ValueError as e:
            self._reject(conn, "invalid message: %s" % e)
            return None
        if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
            self._reject(conn, "message is not an object with a type")
            return None
        return msg

    def _commit(self, conn: socket.socket, path: Any) -> bool:
        """Move a reported checkpoint into storage, as hone does."""
        if not isinstance(path, str) or not os.path.isabs(path):
            self._reject(conn, "checkpoint %r is not an absolute path" % (path,))
            return False
        if os.path.dirname(os.path.normpath(path)) != self.staging or not os.path.isdir(path):
            self._reject(conn, "checkpoint %s is not a directory in the staging directory" % path)
            return False
        dest = os.path.join(self.storage, "checkpoint_%06d" % len(self.committed))
        os.rename(path, dest)
        self.committed.append(dest)
        return True

    def _session(self, conn: socket.socket, reader: Any) -> None:
        hello = self._recv(conn, reader)
        if hello is None:
            return
        if hello["type"] != "hello":
            return self._reject(conn, "message out of turn: %s before hello" % hello["type"])
        self.hello = hello
        if hello.get("v") != 1:
            return self._reject(conn, "unsupported protocol version %r" % hello.get("v"))
        if hello.get("token") != TOKEN:
            return self._reject(conn, "wrong token")
        if hello.get("trial_id") != TRIAL_ID:
            return self._reject(conn, "wrong trial id")
        if not isinstance(hello.get("can_save", False), bool):
            return self._reject(conn, "can_save is not a boolean")
        welcome = self.welcome if self.welcome is not None else {"type": "welcome", "v": 1}
        self._send(conn, welcome)
        if not (isinstance(welcome, dict) and welcome.get("type") == "welcome"):
            reader.read()  # wait for the client to go away
            return
        while True:
            msg = self._recv(conn, reader)
            if msg is None:
                return
            if msg["type"] != "report":
                return self._reject(conn, "message out of turn: %s" % msg["type"])
            if not isinstance(msg.get("metrics"), dict):
                return self._reject(conn, "report without a metrics object")
            if not isinstance(msg.get("done", False), bool):
                return self._reject(conn, "done is not a boolean")
            if "checkpoint" in msg and not self._commit(conn, msg["checkpoint"]):
                return
            self.reports.append(msg)
            if not self._answer(conn, reader):
                return

    def _answer(self, conn: socket.socket, reader: Any) -> bool:
        """Answer a report from the script; False when the session is over."""
        while True:
            item = self.script.pop(0) if self.script else "continue"
            if item is None:
                return False
            if isinstance(item, str):
                item = {"type": "directive", "action": item}
            elif isinstance(item, tuple):
                item = {"type": "directive", "action": item[0], "reason": item[1]}
            self._send(conn, item)
            if not (isinstance(item, dict) and item.get("type") == "directive"):
                # An injected bad answer: close now if the script says so,
                # else wait for the client to go away.
                if self.script and self.script[0] is None:
                    return False
                reader.read()
                return False
            if item.get("action") != "checkpoint":
                return True
            saved = self._recv(conn, reader)
            if saved is None:
                return False
            if saved["type"] != "saved":
                self._reject(conn, "expected saved, got %s" % saved["type"])
                return False
            if not isinstance(saved.get("checkpoint", ""), str):
                self._reject(conn, "saved checkpoint is not a string")
                return False
            self.saved.append(saved)
            if saved.get("checkpoint") and not self._commit(conn, saved["checkpoint"]):
                return False


class ClientTest(unittest.TestCase):
    """Base: a clean environment and client state for every test."""

    def setUp(self) -> None:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("HONE_") and k != "SLURMD_NODENAME"}
        patcher = mock.patch.dict(os.environ, clean, clear=True)
        patcher.start()
        self.addCleanup(patcher.stop)
        hone._reset()
        self.addCleanup(hone._reset)

    def use(self, server: FakeHone, **extra: str) -> None:
        """Make the process look like hone's trial served by server."""
        os.environ.update(server.env(**extra))

    def done(self, server: FakeHone) -> None:
        """Close the client's connection, wait for server, check it saw no violation."""
        hone._reset()
        server.finish()
        self.assertEqual(server.violations, [])

    def capture(self) -> io.StringIO:
        """Capture standard output for the rest of the test."""
        out = io.StringIO()
        redirect = contextlib.redirect_stdout(out)
        redirect.__enter__()
        self.addCleanup(redirect.__exit__, None, None, None)
        return out


def fallback_lines(text: str) -> List[Dict[str, Any]]:
    """Parse the HONE_REPORT lines of a script's standard output."""
    out = []
    for line in text.splitlines():
        if line.startswith("HONE_REPORT "):
            out.append(json.loads(line[len("HONE_REPORT ") :], parse_constant=_reject_constant))
    return out


class EnvironmentTest(ClientTest):
    def test_config_from_env(self) -> None:
        os.environ["HONE_CONFIG"] = '{"lr": 0.01, "layers": 3, "opt": {"name": "sgd"}}'
        config = hone.get_config()
        self.assertEqual(config, {"lr": 0.01, "layers": 3, "opt": {"name": "sgd"}})
        config["lr"] = 1.0
        self.assertEqual(hone.get_config()["lr"], 0.01, "get_config must return a fresh copy")

    def test_config_outside_hone(self) -> None:
        self.assertEqual(hone.get_config(), {})
        os.environ["HONE_CONFIG"] = ""
        self.assertEqual(hone.get_config(), {})

    def test_bad_config(self) -> None:
        os.environ["HONE_CONFIG"] = "[1, 2]"
        with self.assertRaisesRegex(hone.HoneError, "HONE_CONFIG"):
            hone.get_config()
        os.environ["HONE_CONFIG"] = "{nope"
        with self.assertRaisesRegex(hone.HoneError, "HONE_CONFIG"):
            hone.get_config()

    def test_trial_variables(self) -> None:
        self.assertEqual(hone.trial_id(), "")
        self.assertEqual(hone.trial_dir(), os.getcwd())
        self.assertIsNone(hone.get_checkpoint())
        self.assertEqual(hone.get_iteration(), 0)
        os.environ.update(
            {
                "HONE_TRIAL_ID": TRIAL_ID,
                "HONE_TRIAL_DIR": "/runs/t1",
                "HONE_RESTORE_DIR": "/store/ckpt_3",
                "HONE_ITERATION": "12",
            }
        )
        self.assertEqual(hone.trial_id(), TRIAL_ID)
        self.assertEqual(hone.trial_dir(), "/runs/t1")
        self.assertEqual(hone.get_checkpoint(), "/store/ckpt_3")
        self.assertEqual(hone.get_iteration(), 12)
        os.environ["HONE_RESTORE_DIR"] = ""
        self.assertIsNone(hone.get_checkpoint())
        os.environ["HONE_ITERATION"] = "twelve"
        with self.assertRaisesRegex(hone.HoneError, "HONE_ITERATION"):
            hone.get_iteration()


class CheckpointDirTest(ClientTest):
    def test_inside_staging_and_unique(self) -> None:
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root, True)
        staging = os.path.join(root, "trial", ".staging")  # not there yet
        os.environ["HONE_STAGING_DIR"] = staging
        dirs = [hone.checkpoint_dir() for _ in range(20)]
        self.assertEqual(len(set(dirs)), len(dirs))
        for d in dirs:
            self.assertTrue(os.path.isabs(d))
            self.assertEqual(os.path.dirname(d), staging)
            self.assertTrue(os.path.isdir(d))
            self.assertEqual(os.listdir(d), [])

    def test_names_not_reused_by_a_restarted_trial(self) -> None:
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root, True)
        os.environ["HONE_STAGING_DIR"] = root
        first = hone.checkpoint_dir()
        os.rmdir(first)  # hone moved it into storage
        hone._reset()  # a new process of the same trial
        self.assertNotEqual(hone.checkpoint_dir(), first)

    def test_outside_hone(self) -> None:
        a, b = hone.checkpoint_dir(), hone.checkpoint_dir()
        self.addCleanup(shutil.rmtree, os.path.dirname(a), True)
        self.assertNotEqual(a, b)
        self.assertTrue(os.path.isdir(a) and os.path.isdir(b))
        self.assertTrue(a.startswith(os.path.realpath(tempfile.gettempdir())) or a.startswith(tempfile.gettempdir()))


class FallbackTest(ClientTest):
    def test_report_line_outside_hone(self) -> None:
        out = self.capture()
        self.assertEqual(hone.report({"loss": 0.25, "acc": 1, "tag": "x", "ok": True}), "continue")
        self.assertEqual(out.getvalue(), 'HONE_REPORT {"metrics":{"loss":0.25,"acc":1,"tag":"x","ok":true},"done":false}\n')

    def test_line_with_checkpoint_and_done(self) -> None:
        out = self.capture()
        ckpt = hone.checkpoint_dir()
        self.addCleanup(shutil.rmtree, os.path.dirname(ckpt), True)
        self.assertEqual(hone.report({"loss": 0.5}, checkpoint_dir=ckpt, done=True), "continue")
        (line,) = fallback_lines(out.getvalue())
        self.assertEqual(line, {"metrics": {"loss": 0.5}, "checkpoint": ckpt, "done": True})
        self.assertFalse(hone.should_stop())

    def test_trial_without_socket(self) -> None:
        # hone's stdout fallback mode: a trial id and a staging directory,
        # no socket. The checkpoint must come from the staging directory.
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root, True)
        os.environ.update({"HONE_TRIAL_ID": TRIAL_ID, "HONE_STAGING_DIR": os.path.join(root, ".staging")})
        out = self.capture()
        ckpt = hone.checkpoint_dir()
        self.assertEqual(hone.report({"step": 1}, checkpoint_dir=ckpt), "continue")
        self.assertEqual(fallback_lines(out.getvalue()), [{"metrics": {"step": 1}, "checkpoint": ckpt, "done": False}])

    def test_non_ascii_stays_on_one_line(self) -> None:
        out = self.capture()
        hone.report({"note": "température\nélevée"})
        text = out.getvalue()
        self.assertEqual(text.count("\n"), 1)
        self.assertEqual(fallback_lines(text)[0]["metrics"]["note"], "température\nélevée")

    def test_subprocess_output(self) -> None:
        env = {k: v for k, v in os.environ.items()}
        env["HONE_TRIAL_ID"] = TRIAL_ID
        env["PYTHONPATH"] = HERE
        code = "import hone\nprint('hello')\nfor i in range(3):\n    hone.report({'i': i}, done=i == 2)\n"
        proc = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, timeout=60)
        self.assertEqual(proc.returncode, 0)
        self.assertEqual(
            proc.stdout.decode().splitlines(),
            [
                "hello",
                'HONE_REPORT {"metrics":{"i":0},"done":false}',
                'HONE_REPORT {"metrics":{"i":1},"done":false}',
                'HONE_REPORT {"metrics":{"i":2},"done":true}',
            ],
        )


class MetricsTest(ClientTest):
    def test_nan_names_the_metric(self) -> None:
        out = self.capture()
        with self.assertRaisesRegex(ValueError, "'val_loss'.*nan"):
            hone.report({"acc": 0.5, "val_loss": float("nan")})
        with self.assertRaisesRegex(ValueError, "'loss'.*inf"):
            hone.report({"loss": math.inf})
        with self.assertRaisesRegex(ValueError, r"'eval.curve\[1\]'.*-inf"):
            hone.report({"eval": {"curve": [1.0, -math.inf]}})
        self.assertEqual(out.getvalue(), "", "nothing may be reported")

    def test_nan_is_caught_before_sending(self) -> None:
        server = FakeHone(self)
        self.use(server)
        self.assertEqual(hone.report({"loss": 1.0}), "continue")
        with self.assertRaisesRegex(ValueError, "'loss'"):
            hone.report({"loss": float("nan")})
        self.assertEqual(hone.report({"loss": 0.5}), "continue", "the trial can go on after a rejected report")
        self.done(server)
        self.assertEqual([r["metrics"] for r in server.reports], [{"loss": 1.0}, {"loss": 0.5}])

    def test_bad_types(self) -> None:
        self.capture()
        with self.assertRaisesRegex(ValueError, "'big'.*too large"):
            hone.report({"big": 10**400})
        with self.assertRaisesRegex(TypeError, "'x'.*bytes"):
            hone.report({"x": b"raw"})
        with self.assertRaises(TypeError):
            hone.report({1: 2.0})  # type: ignore[dict-item]
        with self.assertRaises(TypeError):
            hone.report([("loss", 1.0)])  # type: ignore[arg-type]

    def test_number_like_values(self) -> None:
        import fractions

        class Scalar:
            """Stands in for a NumPy scalar or a one-element tensor."""

            def __init__(self, v: float) -> None:
                self.v = v

            def item(self) -> float:
                return self.v

        out = self.capture()
        hone.report({"a": fractions.Fraction(1, 4), "b": Scalar(2.5), "c": (1, 2), "d": None})
        self.assertEqual(fallback_lines(out.getvalue())[0]["metrics"], {"a": 0.25, "b": 2.5, "c": [1, 2], "d": None})
        with self.assertRaisesRegex(ValueError, "'d'"):
            hone.report({"d": Scalar(float("nan"))})

    def test_too_large(self) -> None:
        self.capture()
        with self.assertRaisesRegex(ValueError, "limit"):
            hone.report({"blob": "x" * hone.MAX_MESSAGE_SIZE})

    def test_checkpoint_outside_staging(self) -> None:
        server = FakeHone(self)
        self.use(server)
        elsewhere = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, elsewhere, True)
        with self.assertRaisesRegex(ValueError, "HONE_STAGING_DIR"):
            hone.report({"loss": 1.0}, checkpoint_dir=elsewhere)
        with self.assertRaisesRegex(ValueError, "not a directory"):
            hone.report({"loss": 1.0}, checkpoint_dir=os.path.join(server.staging, "missing"))
        self.done(server)
        self.assertEqual(server.reports, [])


class FunctionProtocolTest(ClientTest):
    def test_hello_and_reports(self) -> None:
        server = FakeHone(self)
        self.use(server)
        self.assertEqual(hone.report({"loss": 0.9, "epoch": 1}), "continue")
        self.assertEqual(hone.report({"loss": 0.7, "epoch": 2}), "continue")
        self.assertEqual(hone.report({"loss": 0.6, "epoch": 3}, done=True), "continue")
        self.done(server)
        self.assertEqual(
            server.hello,
            {
                "type": "hello",
                "v": 1,
                "token": TOKEN,
                "trial_id": TRIAL_ID,
                "can_save": False,
                "host": socket.gethostname(),
            },
        )
        self.assertEqual(server.connections, 1, "one connection per process")
        self.assertEqual(
            server.reports,
            [
                {"type": "report", "metrics": {"loss": 0.9, "epoch": 1}, "done": False},
                {"type": "report", "metrics": {"loss": 0.7, "epoch": 2}, "done": False},
                {"type": "report", "metrics": {"loss": 0.6, "epoch": 3}, "done": True},
            ],
        )

    def test_over_tcp(self) -> None:
        server = FakeHone(self, ["continue", ("stop", "pause")], tcp=True)
        self.use(server)
        self.assertEqual(hone.report({"loss": 0.9}), "continue")
        self.assertEqual(hone.report({"loss": 0.8}), "stop")
        self.assertEqual(hone.stop_reason(), "pause")
        self.done(server)
        self.assertEqual(server.hello["token"], TOKEN)
        self.assertEqual([r["metrics"]["loss"] for r in server.reports], [0.9, 0.8])

    def test_host_from_environment(self) -> None:
        server = FakeHone(self, tcp=True)
        self.use(server, HONE_HOST="n5")
        hone.report({"loss": 1.0}, done=True)
        self.done(server)
        self.assertEqual(server.hello["host"], "n5")

    def test_host_from_slurm(self) -> None:
        # A trial that runs as a Slurm step's task, with no HONE_HOST, names
        # the node Slurm does.
        server = FakeHone(self, tcp=True)
        self.use(server, SLURMD_NODENAME="n7")
        hone.report({"loss": 1.0}, done=True)
        self.done(server)
        self.assertEqual(server.hello["host"], "n7")

    def test_hone_host_before_slurm(self) -> None:
        server = FakeHone(self, tcp=True)
        self.use(server, SLURMD_NODENAME="n7", HONE_HOST="n5")
        hone.report({"loss": 1.0}, done=True)
        self.done(server)
        self.assertEqual(server.hello["host"], "n5")

    def test_bad_tcp_address(self) -> None:
        os.environ.update({"HONE_SOCKET": "tcp://127.0.0.1", "HONE_TRIAL_ID": TRIAL_ID})
        with self.assertRaisesRegex(hone.HoneError, "HOST:PORT"):
            hone.report({"loss": 1.0})

    def test_connects_lazily(self) -> None:
        server = FakeHone(self)
        self.use(server)
        hone.get_config()
        hone.checkpoint_dir()
        hone.should_stop()
        self.assertEqual(server.connections, 0)
        hone.report({"loss": 1.0})
        self.assertEqual(server.connections, 1)
        self.done(server)

    def test_done_metric(self) -> None:
        server = FakeHone(self)
        self.use(server)
        hone.report({"loss": 1.0, "done": True})
        self.done(server)
        self.assertTrue(server.reports[0]["done"])

    def test_checkpoint_is_committed(self) -> None:
        server = FakeHone(self)
        self.use(server)
        ckpt = hone.checkpoint_dir()
        with open(os.path.join(ckpt, "weights.json"), "w") as f:
            f.write("[1, 2, 3]")
        self.assertEqual(hone.report({"loss": 0.5}, checkpoint_dir=ckpt), "continue")
        self.done(server)
        self.assertEqual(server.reports[0]["checkpoint"], ckpt)
        self.assertFalse(os.path.exists(ckpt))
        with open(os.path.join(server.committed[0], "weights.json")) as f:
            self.assertEqual(f.read(), "[1, 2, 3]")

    def test_checkpoint_directive_answered_cannot_save(self) -> None:
        server = FakeHone(self, script=["checkpoint", "continue", "checkpoint", "checkpoint", "continue"])
        self.use(server)
        self.assertEqual(hone.report({"loss": 1.0}), "continue")
        self.assertEqual(hone.report({"loss": 0.5}), "continue")
        self.done(server)
        self.assertEqual(server.saved, [{"type": "saved", "checkpoint": ""}] * 3)
        self.assertEqual(len(server.reports), 2)

    def test_stop(self) -> None:
        server = FakeHone(self, script=["continue", ("stop", "pause")])
        self.use(server)
        self.assertEqual(hone.report({"loss": 1.0}), "continue")
        self.assertFalse(hone.should_stop())
        self.assertIsNone(hone.stop_reason())
        self.assertEqual(hone.report({"loss": 0.5}), "stop")
        self.assertTrue(hone.should_stop())
        self.assertEqual(hone.stop_reason(), "pause")
        # After a stop nothing more is sent.
        self.assertEqual(hone.report({"loss": 0.4}), "stop")
        self.done(server)
        self.assertEqual(len(server.reports), 2)

    def test_stop_without_reason(self) -> None:
        server = FakeHone(self, script=["checkpoint", "stop"])
        self.use(server)
        self.assertEqual(hone.report({"loss": 1.0}), "stop")
        self.assertEqual(hone.stop_reason(), "stop")
        self.done(server)

    def test_wrong_token(self) -> None:
        server = FakeHone(self)
        self.use(server, HONE_TOKEN="bad")
        with self.assertRaises(hone.HoneError) as cm:
            hone.report({"loss": 1.0})
        self.assertEqual(cm.exception.message, "wrong token")
        self.assertIn("wrong token", str(cm.exception))
        # The failure sticks: the trial cannot go on.
        with self.assertRaisesRegex(hone.HoneError, "wrong token"):
            hone.report({"loss": 1.0})
        hone._reset()
        server.finish()
        self.assertEqual(server.violations, ["wrong token"])

    def test_error_instead_of_welcome(self) -> None:
        server = FakeHone(self, welcome={"type": "error", "message": "trial 0a1b2c3d is not running"})
        self.use(server)
        with self.assertRaisesRegex(hone.HoneError, "trial 0a1b2c3d is not running"):
            hone.report({"loss": 1.0})
        self.done(server)

    def test_error_after_report(self) -> None:
        server = FakeHone(self, script=["continue", {"type": "error", "message": "metric \"x\" is not finite"}])
        self.use(server)
        self.assertEqual(hone.report({"loss": 1.0}), "continue")
        with self.assertRaises(hone.HoneError) as cm:
            hone.report({"loss": 0.5})
        self.assertEqual(cm.exception.message, 'metric "x" is not finite')
        self.assertIn('hone: metric "x" is not finite', str(cm.exception))
        with self.assertRaisesRegex(hone.HoneError, "not finite"):
            hone.report({"loss": 0.4})
        self.done(server)

    def test_error_while_training(self) -> None:
        # hone gives up on the trial between two reports: its error is
        # waiting in the socket when the next report finds the connection
        # closed.
        answer = b'{"type":"directive","action":"continue"}\n{"type":"error","message":"trial cancelled"}\n'
        server = FakeHone(self, script=[answer, None])
        self.use(server)
        self.assertEqual(hone.report({"loss": 1.0}), "continue")
        server.thread.join(TIMEOUT)
        with self.assertRaises(hone.HoneError) as cm:
            hone.report({"loss": 0.5})
        self.assertEqual(cm.exception.message, "trial cancelled")
        self.done(server)

    def test_bad_answers(self) -> None:
        cases = [
            (b"this is not json\n", "not JSON"),
            (b"[1, 2]\n", "without a type"),
            ({"type": "directive", "action": "explode"}, "unknown directive 'explode'"),
            ({"type": "welcome", "v": 1}, "expected a directive"),
            (None, "closed the connection"),
        ]
        for answer, want in cases:
            with self.subTest(answer=answer):
                hone._reset()
                server = FakeHone(self, script=[answer, "continue"])
                self.use(server)
                with self.assertRaisesRegex(hone.HoneError, want):
                    hone.report({"loss": 1.0})
                with self.assertRaisesRegex(hone.HoneError, want):
                    hone.report({"loss": 1.0})
                self.done(server)

    def test_oversized_answer(self) -> None:
        server = FakeHone(self, script=[b"{" + b" " * hone.MAX_MESSAGE_SIZE + b"}\n"])
        self.use(server)
        with self.assertRaisesRegex(hone.HoneError, "over"):
            hone.report({"loss": 1.0})
        self.done(server)

    def test_no_server(self) -> None:
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root, True)
        os.environ.update({"HONE_SOCKET": os.path.join(root, "nobody.sock"), "HONE_TRIAL_ID": TRIAL_ID})
        with self.assertRaisesRegex(hone.HoneError, "cannot connect"):
            hone.report({"loss": 1.0})

    def test_protocol_version(self) -> None:
        server = FakeHone(self)
        self.use(server, HONE_PROTOCOL="2")
        with self.assertRaisesRegex(hone.HoneError, "version"):
            hone.report({"loss": 1.0})
        self.done(server)
        self.assertEqual(server.connections, 0)

    def test_report_inside_trainable(self) -> None:
        self.capture()

        class Nested(hone.Trainable):
            def step(self) -> Dict[str, Any]:
                hone.report({"x": 1})
                return {"done": True}

        with self.assertRaisesRegex(RuntimeError, "step"):
            Nested.run()


class Recorder(hone.Trainable):
    """A trainable that records the calls hone makes."""

    steps_to_done = 0  # 0: never done
    fail_save = False
    fail_step_at = 0
    checkpoint_at: Tuple[int, ...] = ()  # iterations at which step asks for a checkpoint

    def __init__(self) -> None:
        self.calls: List[Any] = []
        self.value = 0

    def setup(self, config: Dict[str, Any]) -> None:
        self.calls.append(("setup", config, self.iteration))
        self.value = config.get("start", 0)

    def step(self) -> Dict[str, Any]:
        self.value += 1
        self.calls.append(("step", self.value))
        if self.fail_step_at and self.value == self.fail_step_at:
            raise ZeroDivisionError("step %d failed" % self.value)
        metrics = {"value": self.value}
        if self.steps_to_done and self.value >= self.steps_to_done:
            metrics["done"] = True
        if self.value in self.checkpoint_at:
            metrics["should_checkpoint"] = True
        return metrics

    def save(self, checkpoint_dir: str) -> None:
        self.calls.append(("save", checkpoint_dir))
        if self.fail_save:
            raise OSError("disk full")
        with open(os.path.join(checkpoint_dir, "state.json"), "w") as f:
            json.dump({"value": self.value}, f)

    def load(self, checkpoint_dir: str) -> None:
        self.calls.append(("load", checkpoint_dir))
        with open(os.path.join(checkpoint_dir, "state.json")) as f:
            self.value = json.load(f)["value"]


def committed_values(server: FakeHone) -> List[int]:
    """Return the values stored in server's committed checkpoints."""
    out = []
    for path in server.committed:
        with open(os.path.join(path, "state.json")) as f:
            out.append(json.load(f)["value"])
    return out


class TrainableProtocolTest(ClientTest):
    def test_checkpoint_directive_calls_save(self) -> None:
        server = FakeHone(self, script=["continue", "checkpoint", "continue", "continue", "stop"])
        self.use(server, HONE_CONFIG='{"start": 10}')
        t = Recorder()
        t.run()
        self.done(server)
        self.assertEqual((server.hello or {})["can_save"], True)
        self.assertEqual([r["metrics"] for r in server.reports], [{"value": v} for v in (11, 12, 13, 14)])
        self.assertEqual(t.calls[0], ("setup", {"start": 10}, 0))
        saves = [c for c in t.calls if c[0] == "save"]
        self.assertEqual(len(saves), 1)
        self.assertEqual(os.path.dirname(saves[0][1]), server.staging)
        self.assertEqual(server.saved, [{"type": "saved", "checkpoint": saves[0][1]}])
        self.assertEqual(committed_values(server), [12])
        self.assertEqual(t.calls.index(saves[0]), 3, "save runs after step 2, before step 3")
        self.assertEqual(t.iteration, 4)

    def test_stop_ends_run(self) -> None:
        server = FakeHone(self, script=[("stop", "pause")])
        self.use(server)
        t = Recorder()
        t.run()
        self.assertEqual(hone.stop_reason(), "pause")
        self.done(server)
        self.assertEqual(len(server.reports), 1)
        self.assertEqual(t.calls[-1], ("step", 1))

    def test_done_ends_run(self) -> None:
        # After the last result hone may still ask for a checkpoint.
        server = FakeHone(self, script=["continue", "continue", "checkpoint", "stop"])
        self.use(server)
        t = Recorder()
        t.steps_to_done = 3
        t.run()
        self.done(server)
        self.assertEqual([r["done"] for r in server.reports], [False, False, True])
        self.assertEqual(server.reports[-1]["metrics"], {"value": 3, "done": True})
        self.assertEqual(committed_values(server), [3])

    def test_done_ends_run_on_continue(self) -> None:
        server = FakeHone(self)
        self.use(server)
        t = Recorder()
        t.steps_to_done = 2
        t.run()
        self.done(server)
        self.assertEqual(len(server.reports), 2)

    def test_should_checkpoint(self) -> None:
        server = FakeHone(self, script=["continue"] * 3 + ["stop"])
        self.use(server)
        t = Recorder()
        t.checkpoint_at = (2, 4)
        t.run()
        self.done(server)
        self.assertEqual([("checkpoint" in r) for r in server.reports], [False, True, False, True])
        self.assertEqual([r["metrics"] for r in server.reports], [{"value": v} for v in (1, 2, 3, 4)])
        self.assertEqual(committed_values(server), [2, 4])

    def test_save_failure_is_reported(self) -> None:
        server = FakeHone(self, script=["checkpoint", "continue", "stop"])
        self.use(server)
        t = Recorder()
        t.fail_save = True
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            t.run()
        self.done(server)
        self.assertEqual(len(server.saved), 1)
        self.assertEqual(server.saved[0]["checkpoint"], "")
        self.assertIn("OSError: disk full", server.saved[0]["error"])
        self.assertIn("disk full", stderr.getvalue())
        self.assertEqual(len(server.reports), 2, "training goes on after a failed save")
        self.assertEqual(os.listdir(server.staging), [], "the failed save's directory is removed")

    def test_restore(self) -> None:
        server = FakeHone(self, script=["stop"])
        ckpt = os.path.join(server.root, "stored")
        os.makedirs(ckpt)
        with open(os.path.join(ckpt, "state.json"), "w") as f:
            json.dump({"value": 40}, f)
        self.use(server, HONE_RESTORE_DIR=ckpt, HONE_ITERATION="7")
        t = Recorder()
        hone.run(t)
        self.done(server)
        self.assertEqual(t.calls[:3], [("setup", {}, 7), ("load", ckpt), ("step", 41)])
        self.assertEqual(t.iteration, 8)

    def test_run_on_class(self) -> None:
        made: List[Recorder] = []

        class Made(Recorder):
            def __init__(self) -> None:
                super().__init__()
                made.append(self)

        for run in (Made.run, lambda: hone.run(Made)):
            with self.subTest(run=run):
                hone._reset()
                server = FakeHone(self, script=["continue", "stop"])
                self.use(server)
                run()
                self.done(server)
                self.assertEqual(len(server.reports), 2)
        self.assertEqual(len(made), 2)

    def test_cannot_save(self) -> None:
        class NoSave(hone.Trainable):
            def step(self) -> Dict[str, Any]:
                return {"x": 1}

        server = FakeHone(self, script=["checkpoint", "stop"])
        self.use(server)
        NoSave.run()
        self.done(server)
        self.assertEqual((server.hello or {})["can_save"], False)
        self.assertEqual(server.saved, [{"type": "saved", "checkpoint": ""}])

    def test_step_exception_propagates(self) -> None:
        server = FakeHone(self)
        self.use(server)
        t = Recorder()
        t.fail_step_at = 3
        with self.assertRaisesRegex(ZeroDivisionError, "step 3 failed"):
            t.run()
        self.done(server)
        self.assertEqual(len(server.reports), 2)

    def test_outside_hone(self) -> None:
        out = self.capture()
        t = Recorder()
        t.steps_to_done = 3
        t.checkpoint_at = (2,)
        t.run()
        lines = fallback_lines(out.getvalue())
        self.assertEqual([line["metrics"]["value"] for line in lines], [1, 2, 3])
        self.assertEqual([line["done"] for line in lines], [False, False, True])
        ckpt = lines[1]["checkpoint"]
        self.addCleanup(shutil.rmtree, os.path.dirname(ckpt), True)
        with open(os.path.join(ckpt, "state.json")) as f:
            self.assertEqual(json.load(f), {"value": 2})


def run_script(args: List[str], env: Dict[str, str]) -> "subprocess.CompletedProcess[bytes]":
    """Run a Python script as hone would: its own process, hone's environment."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("HONE_")}
    full.update(env)
    return subprocess.run(
        [sys.executable] + args, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120
    )


class ProcessTest(ClientTest):
    def test_exception_exits_non_zero(self) -> None:
        server = FakeHone(self)
        script = os.path.join(server.root, "fails.py")
        with open(script, "w") as f:
            f.write(
                "import sys\nsys.path.insert(0, %r)\nimport hone\n"
                "hone.report({'loss': 1.0})\nraise SystemExit(hone.undefined)\n" % HERE
            )
        proc = run_script([script], server.env())
        server.finish()
        self.assertEqual(server.violations, [])
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn(b"AttributeError", proc.stderr)
        self.assertEqual(len(server.reports), 1)

    def test_hone_error_exits_non_zero(self) -> None:
        server = FakeHone(self)
        script = os.path.join(server.root, "bad_token.py")
        with open(script, "w") as f:
            f.write("import sys\nsys.path.insert(0, %r)\nimport hone\nhone.report({'loss': 1.0})\n" % HERE)
        proc = run_script([script], server.env(HONE_TOKEN="0000"))
        server.finish()
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn(b"HoneError: hone: wrong token", proc.stderr)


@unittest.skipUnless(os.path.isdir(EXAMPLES), "examples/python not found")
class ExamplesTest(ClientTest):
    """The example training scripts, run as hone runs them."""

    CONFIG = {"lr": 0.3, "momentum": 0.9, "hidden": 8, "epochs": 6, "checkpoint_every": 2}

    def example(self, name: str) -> str:
        return os.path.join(EXAMPLES, name)

    def test_train_by_hand(self) -> None:
        for name in ("train.py", "train_class.py"):
            with self.subTest(name=name):
                tmp = tempfile.mkdtemp()
                self.addCleanup(shutil.rmtree, tmp, True)
                proc = run_script([self.example(name)], {"TMPDIR": tmp})
                self.assertEqual(proc.returncode, 0, proc.stderr.decode())
                lines = fallback_lines(proc.stdout.decode())
                self.assertEqual(len(lines), 20)
                self.assertTrue(lines[-1]["done"])
                for line in lines:
                    self.assertEqual(set(line["metrics"]) - {"done"}, {"epoch", "loss", "accuracy", "train_loss"})

    def test_train(self) -> None:
        server = FakeHone(self)
        proc = run_script([self.example("train.py")], server.env(HONE_CONFIG=json.dumps(self.CONFIG)))
        server.finish()
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        self.assertEqual(server.violations, [])
        self.assertEqual([r["metrics"]["epoch"] for r in server.reports], [1, 2, 3, 4, 5, 6])
        self.assertEqual([r["done"] for r in server.reports], [False] * 5 + [True])
        self.assertEqual([("checkpoint" in r) for r in server.reports], [False, True, False, True, False, True])
        last = server.reports[-1]["metrics"]
        self.assertTrue(0.0 <= last["accuracy"] <= 1.0 and last["loss"] > 0)

        # Paused after epoch 3, then restarted from the checkpoint of epoch 2.
        paused = FakeHone(self, script=["continue", "continue", ("stop", "pause")])
        proc = run_script([self.example("train.py")], paused.env(HONE_CONFIG=json.dumps(self.CONFIG)))
        paused.finish()
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        self.assertEqual(len(paused.reports), 3)
        resumed = FakeHone(self)
        env = resumed.env(
            HONE_CONFIG=json.dumps(self.CONFIG), HONE_RESTORE_DIR=paused.committed[0], HONE_ITERATION="2"
        )
        proc = run_script([self.example("train.py")], env)
        resumed.finish()
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        self.assertEqual(resumed.violations, [])
        self.assertEqual([r["metrics"]["epoch"] for r in resumed.reports], [3, 4, 5, 6])
        # Restoring reproduces the uninterrupted run exactly.
        self.assertEqual([r["metrics"] for r in resumed.reports], [r["metrics"] for r in server.reports[2:]])

    def test_train_class(self) -> None:
        config = dict(self.CONFIG, checkpoint_every=0)
        server = FakeHone(self, script=["continue", "checkpoint", "continue", ("stop", "pause")])
        proc = run_script([self.example("train_class.py")], server.env(HONE_CONFIG=json.dumps(config)))
        server.finish()
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        self.assertEqual(server.violations, [])
        self.assertTrue((server.hello or {})["can_save"])
        self.assertEqual([r["metrics"]["epoch"] for r in server.reports], [1, 2, 3])
        self.assertEqual(len(server.committed), 1)
        with open(os.path.join(server.committed[0], "model.json")) as f:
            self.assertEqual(json.load(f)["epoch"], 2)

        resumed = FakeHone(self)
        env = resumed.env(HONE_CONFIG=json.dumps(config), HONE_RESTORE_DIR=server.committed[0], HONE_ITERATION="2")
        proc = run_script([self.example("train_class.py")], env)
        resumed.finish()
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        self.assertEqual(resumed.violations, [])
        self.assertEqual([r["metrics"]["epoch"] for r in resumed.reports], [3, 4, 5, 6])
        self.assertEqual(resumed.reports[0]["metrics"], server.reports[2]["metrics"])
        self.assertTrue(resumed.reports[-1]["done"])


if __name__ == "__main__":
    unittest.main()
