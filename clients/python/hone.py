"""Client for training scripts run by hone, the hyperparameter tuner.

A single file using only the Python standard library (3.8 or newer). Install
it with ``pip install ./clients/python`` (from the hone repository; nothing is
downloaded), copy it next to a training script, or put its directory on
``sys.path``.

hone starts every trial as a process with its configuration and the address
of a Unix socket in environment variables (see ``wire/doc.go`` in the hone
repository). This module reads them and speaks the protocol, in one of two
styles.

Function style: the script trains in its own loop and reports::

    import hone

    config = hone.get_config()
    model = build(config)
    restore = hone.get_checkpoint()
    if restore:
        model.load(restore)
    for epoch in range(hone.get_iteration(), 100):
        loss = train_one_epoch(model, config["lr"])
        ckpt = hone.checkpoint_dir()
        model.save(ckpt)
        if hone.report({"loss": loss}, checkpoint_dir=ckpt) == "stop":
            break

Class style: subclass :class:`Trainable`; hone drives it one ``step`` at a
time and can ask it to save at any moment, so pausing a trial never loses
progress::

    class Train(hone.Trainable):
        def setup(self, config): ...
        def step(self): return {"loss": ...}
        def save(self, checkpoint_dir): ...
        def load(self, checkpoint_dir): ...

    if __name__ == "__main__":
        Train.run()

Outside hone (no ``HONE_SOCKET`` in the environment) everything still
works: :func:`get_config` returns ``{}``, checkpoints go to a temporary
directory, and every report is printed as a ``HONE_REPORT {json}`` line, the
protocol's standard-output fallback.

Exceptions raised by training code are not caught: the process exits with a
non-zero status and hone records the trial as failed. A protocol problem
(hone rejecting a message, a lost connection) raises :class:`HoneError`.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import secrets
import shutil
import signal
import socket
import sys
import tempfile
import threading
import traceback
from collections.abc import Mapping
from typing import Any, Callable, Dict, Optional, Tuple, Type, Union

__all__ = [
    "HoneError",
    "Trainable",
    "checkpoint_dir",
    "get_checkpoint",
    "get_config",
    "get_iteration",
    "report",
    "run",
    "should_stop",
    "stop_reason",
    "trial_dir",
    "trial_id",
    "MAX_MESSAGE_SIZE",
    "PROTOCOL_VERSION",
    "REPORT_PREFIX",
]

#: The client's version, which is hone's (hone.Version in Go).
__version__ = "0.1.0"

#: The protocol version this client speaks.
PROTOCOL_VERSION = 1

#: The largest message in bytes, including its terminating newline.
MAX_MESSAGE_SIZE = 1 << 20

#: The start of a standard-output fallback report line.
REPORT_PREFIX = "HONE_REPORT "

CONTINUE = "continue"
CHECKPOINT = "checkpoint"
STOP = "stop"

_ENV_PROTOCOL = "HONE_PROTOCOL"
_ENV_SOCKET = "HONE_SOCKET"
_ENV_HOST = "HONE_HOST"
_ENV_SLURM_NODE = "SLURMD_NODENAME"
_TCP_SCHEME = "tcp://"
_DIAL_TIMEOUT = 30.0
_ENV_TOKEN = "HONE_TOKEN"
_ENV_TRIAL_ID = "HONE_TRIAL_ID"
_ENV_TRIAL_DIR = "HONE_TRIAL_DIR"
_ENV_STAGING_DIR = "HONE_STAGING_DIR"
_ENV_RESTORE_DIR = "HONE_RESTORE_DIR"
_ENV_ITERATION = "HONE_ITERATION"
_ENV_CONFIG = "HONE_CONFIG"

# The longest save error sent to hone; the rest of a long traceback is cut.
_MAX_ERROR_TEXT = 64 * 1024


class HoneError(RuntimeError):
    """A protocol failure: hone rejected a message, or the connection broke.

    ``message`` holds hone's own explanation when hone sent one (an
    ``{"type":"error"}`` message), else ``None``.
    """

    def __init__(self, text: str, message: Optional[str] = None) -> None:
        super().__init__(text)
        self.message = message


# ---------------------------------------------------------------------------
# Environment


def get_config() -> Dict[str, Any]:
    """Return the trial's configuration (``HONE_CONFIG``) as a new dict.

    Returns ``{}`` when the script is not run by hone. Each call returns a
    fresh copy, so changing it affects nothing else.

    Raises:
        HoneError: ``HONE_CONFIG`` is not a JSON object.
    """
    raw = os.environ.get(_ENV_CONFIG, "")
    if not raw.strip():
        return {}
    try:
        config = json.loads(raw)
    except ValueError as e:
        raise HoneError("%s is not valid JSON: %s" % (_ENV_CONFIG, e)) from None
    if not isinstance(config, dict):
        raise HoneError("%s is not a JSON object" % _ENV_CONFIG)
    return config


def trial_id() -> str:
    """Return the trial's id (``HONE_TRIAL_ID``), or ``""`` outside hone."""
    return os.environ.get(_ENV_TRIAL_ID, "")


def trial_dir() -> str:
    """Return the trial's directory (``HONE_TRIAL_DIR``).

    The script may write logs and scratch files there. Outside hone it is
    the current working directory.
    """
    return os.environ.get(_ENV_TRIAL_DIR) or os.getcwd()


def get_checkpoint() -> Optional[str]:
    """Return the checkpoint directory to restore from, or ``None``.

    It is ``HONE_RESTORE_DIR``: a directory written earlier by this trial
    (through :func:`checkpoint_dir` or :meth:`Trainable.save`). Treat it as
    read-only.
    """
    return os.environ.get(_ENV_RESTORE_DIR) or None


def get_iteration() -> int:
    """Return the training iteration the restored checkpoint was taken at.

    It is ``HONE_ITERATION``: the number of reports the trial had made when
    it saved that checkpoint, and 0 when the trial starts from scratch.

    Raises:
        HoneError: ``HONE_ITERATION`` is not an integer.
    """
    raw = os.environ.get(_ENV_ITERATION, "").strip()
    if not raw:
        return 0
    try:
        return int(raw)
    except ValueError:
        raise HoneError("%s is not an integer: %r" % (_ENV_ITERATION, raw)) from None


_dir_lock = threading.Lock()
_dir_counter = 0
_temp_root: Optional[str] = None


def checkpoint_dir() -> str:
    """Create and return a fresh, empty directory to write a checkpoint into.

    Under hone the directory is inside ``HONE_STAGING_DIR`` and has a name
    no other call (in this process or an earlier run of the trial) has
    used. Pass it to :func:`report` once the checkpoint is written: hone
    then moves it into storage, and the script must not touch it again. A
    directory that is never reported is cleaned up by hone.

    Outside hone the directory is created under a temporary directory (one
    per process) and left there.
    """
    global _dir_counter, _temp_root
    with _dir_lock:
        parent = os.environ.get(_ENV_STAGING_DIR, "")
        if parent:
            os.makedirs(parent, exist_ok=True)
        else:
            if _temp_root is None or not os.path.isdir(_temp_root):
                _temp_root = tempfile.mkdtemp(prefix="hone-checkpoints-")
            parent = _temp_root
        while True:
            # The counter orders the directories of one process; the random
            # part keeps a restarted trial from reusing an earlier name.
            name = "%d-%s" % (_dir_counter, secrets.token_hex(4))
            _dir_counter += 1
            path = os.path.join(os.path.abspath(parent), name)
            try:
                os.mkdir(path)
            except FileExistsError:
                continue
            return path


# ---------------------------------------------------------------------------
# Messages


def _check_metrics(metrics: Any) -> Dict[str, Any]:
    """Return a JSON-ready copy of metrics, or raise ValueError/TypeError.

    Accepted values are finite numbers, booleans, strings, None (JSON
    null), and dicts (with string keys), lists and tuples of them.
    Number-like objects with an ``item()`` method (NumPy scalars,
    one-element tensors) are converted.
    """
    if not isinstance(metrics, Mapping):
        raise TypeError("metrics must be a dict, not %s" % type(metrics).__name__)
    return _check_object(metrics, "")


def _check_object(obj: Mapping[str, Any], path: str) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for key, value in obj.items():
        if not isinstance(key, str):
            raise TypeError("metric name %r%s is not a string" % (key, _where(path)))
        out[key] = _check_value(value, path + "." + key if path else key)
    return out


def _where(path: str) -> str:
    return " (in %r)" % path if path else ""


def _non_finite(path: str, what: str) -> ValueError:
    return ValueError(
        "metric %r is %s: hone accepts only finite numbers "
        "(leave the metric out, or raise an error if training diverged)" % (path, what)
    )


def _check_value(value: Any, path: str) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        n = int(value)
        try:
            float(n)  # hone reads numbers as 64-bit floats
        except OverflowError:
            raise _non_finite(path, "too large for a 64-bit float") from None
        return n
    if isinstance(value, numbers.Real):
        f = float(value)
        if not math.isfinite(f):
            raise _non_finite(path, str(f))
        return f
    if isinstance(value, Mapping):
        return _check_object(value, path)
    if isinstance(value, (list, tuple)):
        return [_check_value(v, "%s[%d]" % (path, i)) for i, v in enumerate(value)]
    item = getattr(value, "item", None)
    if callable(item) and not isinstance(value, (bytes, bytearray)):
        try:
            scalar = item()
        except Exception:  # not a one-element value: report the type below
            scalar = value
        if scalar is not value and isinstance(scalar, (bool, numbers.Real)):
            return _check_value(scalar, path)
    raise TypeError(
        "metric %r has type %s: hone accepts numbers, booleans, strings, None, "
        "dicts and lists" % (path, type(value).__name__)
    )


def _check_checkpoint(path: Any) -> str:
    """Return the absolute form of a reported checkpoint directory.

    Raises ValueError when it is not a directory, or (under hone) not
    inside ``HONE_STAGING_DIR``, which hone would reject.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError("checkpoint_dir must be a path, not %s" % type(path).__name__)
    path = os.path.abspath(os.fspath(path))
    if not os.path.isdir(path):
        raise ValueError("checkpoint_dir %s is not a directory" % path)
    staging = os.environ.get(_ENV_STAGING_DIR, "")
    if staging:
        staging = os.path.abspath(staging)
        if path == staging or os.path.commonpath([path, staging]) != staging:
            raise ValueError(
                "checkpoint_dir %s is not inside %s (%s): create it with hone.checkpoint_dir()"
                % (path, _ENV_STAGING_DIR, staging)
            )
    return path


def _encode(msg: Dict[str, Any]) -> bytes:
    """Encode msg as one protocol line, checking the size limit."""
    data = json.dumps(msg, allow_nan=False, ensure_ascii=True, separators=(",", ":"))
    line = data.encode("ascii") + b"\n"
    if len(line) > MAX_MESSAGE_SIZE:
        raise ValueError(
            "%s message is %d bytes, over hone's limit of %d"
            % (msg.get("type", "report"), len(line), MAX_MESSAGE_SIZE)
        )
    return line


def _report_body(metrics: Dict[str, Any], checkpoint: Optional[str], done: bool) -> Dict[str, Any]:
    body: Dict[str, Any] = {"metrics": metrics}
    if checkpoint:
        body["checkpoint"] = checkpoint
    body["done"] = done
    return body


# ---------------------------------------------------------------------------
# Connection

# A saver creates a checkpoint on demand and returns its directory; it
# returns "" when the trial cannot save on demand, and raises on failure.
_Saver = Callable[[], str]


def _host() -> str:
    """The machine the hello names: HONE_HOST, else SLURMD_NODENAME (Slurm's
    name of the node, set in every job step), else the host name."""
    return os.environ.get(_ENV_HOST) or os.environ.get(_ENV_SLURM_NODE) or socket.gethostname()


def _dial(address: str) -> socket.socket:
    """Connect to a ``HONE_SOCKET`` value: ``tcp://HOST:PORT`` or a Unix
    socket's path."""
    if address.startswith(_TCP_SCHEME):
        hostport = address[len(_TCP_SCHEME):]
        host, sep, port = hostport.rpartition(":")
        if not sep or not port.isdigit() or not host:
            raise OSError("want %sHOST:PORT" % _TCP_SCHEME)
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        sock = socket.create_connection((host, int(port)), timeout=_DIAL_TIMEOUT)
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(address)
    except OSError:
        sock.close()
        raise
    return sock


class _Connection:
    """One protocol connection to hone: a Unix stream socket, or TCP for a
    trial on another machine (``HONE_SOCKET=tcp://HOST:PORT``)."""

    def __init__(self, path: str, token: str, tid: str, can_save: bool) -> None:
        self._buf = bytearray()
        self.can_save = can_save
        try:
            self._sock = _dial(path)
        except OSError as e:
            raise HoneError("cannot connect to hone at %s: %s" % (path, e)) from None
        self.send(
            {
                "type": "hello",
                "v": PROTOCOL_VERSION,
                "token": token,
                "trial_id": tid,
                "can_save": can_save,
                "host": _host(),
            }
        )
        msg = self.receive()
        if msg.get("type") != "welcome":
            self.close()
            raise HoneError("expected a welcome from hone, got %s" % _describe(msg))
        if msg.get("v", PROTOCOL_VERSION) != PROTOCOL_VERSION:
            self.close()
            raise HoneError("hone speaks protocol version %r, this client %d" % (msg.get("v"), PROTOCOL_VERSION))

    def close(self) -> None:
        """Close the socket; further use fails."""
        try:
            self._sock.close()
        except OSError:
            pass

    def send(self, msg: Dict[str, Any]) -> None:
        """Send one message."""
        line = _encode(msg)
        try:
            self._sock.sendall(line)
        except OSError as e:
            # hone may have rejected an earlier message and closed the
            # connection: its error message is the better explanation.
            self._raise_pending_error()
            self.close()
            raise HoneError("lost the connection to hone: %s" % e) from None

    def receive(self) -> Dict[str, Any]:
        """Wait for one message; raise HoneError on an error message or EOF."""
        line = self._read_line()
        if line is None:
            self.close()
            raise HoneError("hone closed the connection")
        try:
            msg = json.loads(line.decode("utf-8"))
        except ValueError as e:
            self.close()
            raise HoneError("hone sent a message that is not JSON: %s" % e) from None
        if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
            self.close()
            raise HoneError("hone sent a message without a type: %r" % (msg,))
        if msg["type"] == "error":
            self.close()
            text = str(msg.get("message") or "unspecified error")
            raise HoneError("hone: " + text, message=text)
        return msg

    def _read_line(self) -> Optional[bytes]:
        while True:
            end = self._buf.find(b"\n")
            if end >= MAX_MESSAGE_SIZE:
                self.close()
                raise HoneError("hone sent a message over %d bytes" % MAX_MESSAGE_SIZE)
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[: end + 1]
                return line
            if len(self._buf) >= MAX_MESSAGE_SIZE:
                self.close()
                raise HoneError("hone sent a message over %d bytes" % MAX_MESSAGE_SIZE)
            try:
                chunk = self._sock.recv(65536)
            except OSError as e:
                self.close()
                raise HoneError("lost the connection to hone: %s" % e) from None
            if not chunk:
                return None
            self._buf += chunk

    def _raise_pending_error(self) -> None:
        """Raise hone's error if one is waiting to be read, else return."""
        try:
            self._sock.settimeout(1.0)
            line = self._read_line()
        except (HoneError, OSError):
            return
        if line is None:
            return
        try:
            msg = json.loads(line.decode("utf-8"))
        except ValueError:
            return
        if isinstance(msg, dict) and msg.get("type") == "error":
            self.close()
            text = str(msg.get("message") or "unspecified error")
            raise HoneError("hone: " + text, message=text)

    def exchange(self, report: Dict[str, Any], saver: Optional[_Saver]) -> Tuple[str, Optional[str]]:
        """Send a report and wait for its directive.

        Checkpoint directives are answered with a saved message (using
        saver when given) and the wait goes on. Returns the final action,
        "continue" or "stop", and the stop reason.
        """
        msg = dict(report)
        msg["type"] = "report"
        self.send(msg)
        while True:
            answer = self.receive()
            if answer["type"] != "directive":
                self.close()
                raise HoneError("expected a directive from hone, got %s" % _describe(answer))
            action = answer.get("action")
            if action == CONTINUE:
                return CONTINUE, None
            if action == STOP:
                reason = answer.get("reason")
                return STOP, reason if isinstance(reason, str) and reason else STOP
            if action != CHECKPOINT:
                self.close()
                raise HoneError("hone sent an unknown directive %r" % (action,))
            self.send(_save_answer(saver))


def _save_answer(saver: Optional[_Saver]) -> Dict[str, Any]:
    """Run saver for a checkpoint directive and build the saved message."""
    if saver is None:
        return {"type": "saved", "checkpoint": ""}
    try:
        path = saver()
    except Exception as e:
        text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        sys.stderr.write("hone: saving a checkpoint failed:\n" + text)
        sys.stderr.flush()
        if len(text) > _MAX_ERROR_TEXT:
            text = text[: _MAX_ERROR_TEXT // 2] + "\n...\n" + text[-_MAX_ERROR_TEXT // 2 :]
        return {"type": "saved", "checkpoint": "", "error": "save: %s: %s\n\n%s" % (type(e).__name__, e, text)}
    return {"type": "saved", "checkpoint": path}


def _describe(msg: Dict[str, Any]) -> str:
    text = json.dumps(msg)
    return text if len(text) <= 200 else text[:200] + "..."


class _Session:
    """The process's state: its connection and what hone last said."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.conn: Optional[_Connection] = None
        self.failure: Optional[HoneError] = None
        self.stop_reason: Optional[str] = None
        self.in_trainable = False
        # SIGTERM arrived: the trainable starts no further step.
        self.terminated = False

    def connect(self, can_save: bool) -> Optional[_Connection]:
        """Return the connection, opening it at the first call.

        Returns None when there is no socket (outside hone, or in the
        standard-output fallback mode).
        """
        if self.failure is not None:
            raise self.failure
        if self.conn is not None:
            return self.conn
        path = os.environ.get(_ENV_SOCKET, "")
        if not path:
            return None
        version = os.environ.get(_ENV_PROTOCOL, "").strip()
        if version and version != str(PROTOCOL_VERSION):
            raise HoneError("hone speaks protocol version %s, this client %d" % (version, PROTOCOL_VERSION))
        try:
            self.conn = _Connection(
                path, os.environ.get(_ENV_TOKEN, ""), os.environ.get(_ENV_TRIAL_ID, ""), can_save
            )
        except HoneError as e:
            self.failure = e
            raise
        return self.conn

    def report(
        self,
        metrics: Any,
        checkpoint: Optional[str],
        done: bool,
        saver: Optional[_Saver],
        can_save: bool,
    ) -> str:
        """Validate and send one report; return the directive's action."""
        clean = _check_metrics(metrics)
        done = bool(done) or clean.get("done") is True
        if checkpoint is not None:
            checkpoint = _check_checkpoint(checkpoint)
        body = _report_body(clean, checkpoint, done)
        with self.lock:
            if self.stop_reason is not None:
                return STOP
            conn = self.connect(can_save)
            if conn is None:
                _print_report(body)
                return CONTINUE
            try:
                action, reason = conn.exchange(body, saver)
            except HoneError as e:
                self.failure = e
                raise
            if action == STOP:
                self.stop_reason = reason
            return action


def _print_report(body: Dict[str, Any]) -> None:
    """Print a report as a standard-output fallback line."""
    line = REPORT_PREFIX + json.dumps(body, allow_nan=False, ensure_ascii=True, separators=(",", ":")) + "\n"
    if len(line) > MAX_MESSAGE_SIZE:
        raise ValueError("report is %d bytes, over hone's limit of %d" % (len(line), MAX_MESSAGE_SIZE))
    out = sys.stdout
    out.write(line)
    out.flush()


_session = _Session()


def _reset() -> None:
    """Forget the connection and all state, as in a new process.

    For tests, which run several trials in one interpreter.
    """
    global _session, _dir_counter, _temp_root
    with _session.lock:
        if _session.conn is not None:
            _session.conn.close()
    _session = _Session()
    with _dir_lock:
        _dir_counter = 0
        _temp_root = None


# ---------------------------------------------------------------------------
# Function style


def report(metrics: Dict[str, Any], checkpoint_dir: Optional[str] = None, done: bool = False) -> str:
    """Report one result and return hone's answer: ``"continue"`` or ``"stop"``.

    Args:
        metrics: metric names to finite numbers, booleans, strings,
            None, or dicts and lists of them. ``"done": True`` among them has the
            same effect as ``done=True``.
        checkpoint_dir: a directory from :func:`checkpoint_dir` holding a
            checkpoint taken at this point; hone moves it into storage, so
            do not touch it afterwards.
        done: this is the trial's last result.

    Returns:
        ``"continue"``: keep training. ``"stop"``: return or exit promptly
        (with status 0); :func:`stop_reason` tells whether hone will resume
        the trial later (``"pause"``) or not (``"stop"``). Once a stop has
        been received, every later call returns ``"stop"`` without sending
        anything.

    The first call connects to hone (the socket in ``HONE_SOCKET``). Under
    hone, it blocks until hone answers. A request to checkpoint on demand
    is answered with "cannot" (a function-style script saves only when it
    reports). Without a socket the report is printed to standard output as
    a ``HONE_REPORT {json}`` line and the answer is always ``"continue"``.

    Raises:
        ValueError: a metric is NaN or infinite (the message names it), or
            the report is over the protocol's 1 MiB limit.
        TypeError: a metric has a type JSON cannot carry.
        HoneError: hone rejected the report, or the connection failed.
        RuntimeError: called inside :meth:`Trainable.run`, where ``step``
            returns the metrics instead.
    """
    if _session.in_trainable:
        raise RuntimeError("hone.report() cannot be called inside Trainable.run(): return the metrics from step()")
    return _session.report(metrics, checkpoint_dir, done, None, False)


def should_stop() -> bool:
    """Return True once hone has told this trial to stop (or pause)."""
    return _session.stop_reason is not None


def stop_reason() -> Optional[str]:
    """Return why hone stopped the trial, or ``None`` if it has not.

    ``"pause"`` means hone will restart the trial later from its latest
    checkpoint; ``"stop"`` means it will not.
    """
    return _session.stop_reason


# ---------------------------------------------------------------------------
# Class style


class _HybridMethod:
    """A method that works on the class and on an instance alike."""

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func
        self.__doc__ = func.__doc__
        self.__name__ = func.__name__

    def __get__(self, obj: Any, cls: Optional[type] = None) -> Callable[[], None]:
        target = obj if obj is not None else cls

        def bound() -> None:
            self.func(target)

        bound.__doc__ = self.func.__doc__
        bound.__name__ = self.func.__name__
        return bound


def _run_target(target: Any) -> None:
    """Run the trainable as hone's trial until hone stops it or it is done.

    Call it on the class (``MyTrainable.run()``, which creates an instance
    with no arguments) or on an instance (``MyTrainable(...).run()``).

    Connects to hone (saying the trial can save on demand when ``save`` is
    overridden), calls ``setup`` with the configuration, ``load`` when
    restoring, then ``step`` after ``step``, reporting each result and
    saving whenever hone asks. It returns when hone says stop, or after the
    result marked done. Exceptions from the trainable's methods propagate,
    except those of a save that hone asked for, which are sent to hone as a
    failed save (and printed to standard error).

    On SIGTERM (hone sends it to every trial when the experiment is
    interrupted) a trainable that overrides ``save`` finishes its step,
    reports it, saves if hone asks, and returns without starting another
    step; one that cannot save, and function-style scripts, end at once
    (hone resumes them from their latest reported checkpoint).

    Outside hone the results are printed as ``HONE_REPORT`` lines and the
    loop runs until a step returns ``"done": True``.
    """
    _drive(target() if isinstance(target, type) else target)


class Trainable:
    """Base class of a class-style trainable, driven by hone step by step.

    Override :meth:`setup`, :meth:`step`, and, so that hone can checkpoint
    the trial (and pause and resume it without losing progress),
    :meth:`save` and :meth:`load`. Then call ``MyTrainable.run()`` (or
    ``hone.run(MyTrainable)``) from the script's main block.

    ``self.iteration`` is the number of steps done, counting those before
    the restored checkpoint: it starts at :func:`get_iteration` and grows by
    one after each step.
    """

    iteration: int = 0

    def setup(self, config: Dict[str, Any]) -> None:
        """Prepare training for config (the trial's configuration); called once, first."""

    def step(self) -> Dict[str, Any]:
        """Train one iteration and return its metrics.

        ``"done": True`` in the metrics ends the trial after this result;
        ``"should_checkpoint": True`` saves the trainable right after the
        step and reports the checkpoint with the result (the key itself is
        not reported).
        """
        raise NotImplementedError("%s.step" % type(self).__name__)

    def save(self, checkpoint_dir: str) -> None:
        """Write the trainable's state into checkpoint_dir, an empty directory.

        hone owns the directory once save returns. A trainable that does not
        override save cannot be checkpointed.
        """
        raise NotImplementedError("%s.save" % type(self).__name__)

    def load(self, checkpoint_dir: str) -> None:
        """Restore the state from a directory written by :meth:`save`.

        Called after :meth:`setup` and before the first :meth:`step`, only
        when the trial restores. The directory is read-only.
        """
        raise NotImplementedError("%s.load" % type(self).__name__)

    run = _HybridMethod(_run_target)


def _can_save(t: Trainable) -> bool:
    """Whether t's class overrides save."""
    return getattr(type(t), "save", None) is not Trainable.save


def _drive(t: Trainable) -> None:
    if not isinstance(t, Trainable):
        raise TypeError("hone.run needs a Trainable, not %s" % type(t).__name__)
    session = _session
    if session.in_trainable:
        raise RuntimeError("a Trainable is already running in this process")
    can_save = _can_save(t)

    def save() -> str:
        path = checkpoint_dir()
        try:
            t.save(path)
        except BaseException:
            shutil.rmtree(path, ignore_errors=True)
            raise
        return path

    saver = save if can_save else None
    with session.lock:
        conn = session.connect(can_save)
    restore_handler = _watch_sigterm(session) if conn is not None and can_save else None
    session.in_trainable = True
    try:
        t.iteration = get_iteration()
        t.setup(get_config())
        restore = get_checkpoint()
        if restore:
            t.load(restore)
        while True:
            metrics = t.step()
            if not isinstance(metrics, Mapping):
                raise TypeError("%s.step returned %s, not a dict" % (type(t).__name__, type(metrics).__name__))
            t.iteration += 1
            metrics = dict(metrics)
            path = None
            if metrics.pop("should_checkpoint", False) is True:
                if saver is None:
                    raise NotImplementedError(
                        "%s.step asked for a checkpoint but the class does not override save" % type(t).__name__
                    )
                path = saver()
            done = metrics.get("done") is True
            action = session.report(metrics, path, done, saver, can_save)
            if action == STOP or done or session.terminated:
                return
    finally:
        session.in_trainable = False
        if restore_handler is not None:
            restore_handler()


def _watch_sigterm(session: _Session) -> Optional[Callable[[], None]]:
    """Make SIGTERM end a trainable that can save without losing its step.

    hone sends SIGTERM to every trial when the experiment is interrupted,
    then asks the trials to save and stop. On SIGTERM the step in progress
    runs to its end, its result is reported and a checkpoint directive is
    answered with a save, as usual; then the trial returns instead of
    starting another step. A second SIGTERM ends the process at once.
    Returns the function that puts the previous handler back, or None when
    this is not the main thread (where Python cannot handle signals).
    """
    if threading.current_thread() is not threading.main_thread():
        return None

    def on_sigterm(signum: int, frame: Any) -> None:
        session.terminated = True
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    previous = signal.signal(signal.SIGTERM, on_sigterm)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)

    return restore


def run(trainable: Union[Type[Trainable], Trainable]) -> None:
    """Run a :class:`Trainable` subclass (instantiated with no arguments) or instance.

    Same as ``trainable.run()``; see :class:`Trainable`.
    """
    target = trainable() if isinstance(trainable, type) else trainable
    _drive(target)
