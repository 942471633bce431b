// Package wire is the protocol between hone and a trial that runs as a
// separate process (any language). It is small enough to implement with a
// standard library alone; clients/python/hone.py is one implementation and
// package trial (in a subprocess) is another.
//
// # Environment
//
// The process executor starts each trial with:
//
//	HONE_PROTOCOL     protocol version, "1"
//	HONE_SOCKET       where to connect: the path of a Unix stream socket, or
//	                  tcp://HOST:PORT for a trial on another machine (a
//	                  cluster executor); see Addr
//	HONE_TOKEN        the trial's secret token (hex)
//	HONE_TRIAL_ID     the trial id (8 hex characters)
//	HONE_TRIAL_DIR    the trial's directory (logs, params.json, ...)
//	HONE_STAGING_DIR  where to create checkpoint directories (<trial dir>/.staging)
//	HONE_RESTORE_DIR  checkpoint directory to restore from, or empty
//	HONE_ITERATION    training iteration the checkpoint was taken at ("0" if none)
//	HONE_CONFIG       the configuration as a JSON object
//	CUDA_VISIBLE_DEVICES  the GPUs assigned to the trial ("" when none)
//
// # Messages
//
// Messages are JSON objects, one per line ("\n"-terminated, UTF-8), each at
// most MaxMessageSize bytes including the newline, with a "type" field. The
// trial speaks first:
//
//	trial -> hone  {"type":"hello","v":1,"token":"…","trial_id":"…","can_save":true,"host":"n7"}
//	hone -> trial  {"type":"welcome","v":1}
//
// can_save says the trial can checkpoint on demand (a class-style
// trainable). host, optional, names the machine the trial runs on (a
// cluster's node): HONE_HOST when the environment has it, else
// SLURMD_NODENAME (Slurm's name of the node, in a job step), else the host
// name; hone shows it as where the trial's results come from. Then the
// trial reports, and every report is answered with exactly one directive:
//
//	trial -> hone  {"type":"report","metrics":{"loss":0.3},"checkpoint":"/…/.staging/3","done":false}
//	hone -> trial  {"type":"directive","action":"continue"}
//
// metrics is an object of finite numbers, booleans, strings, and nested
// objects or arrays of them; NaN and infinities are rejected (JSON has
// none, and a trial that diverged should say so with an error or leave the
// metric out). checkpoint, optional, is a directory the trial wrote inside
// HONE_STAGING_DIR; hone moves it into storage, so the trial must not touch
// it afterwards. done, optional, marks the last report.
//
// Directive actions:
//
//	continue    keep training
//	checkpoint  save now: the trial answers {"type":"saved","checkpoint":"<dir>"}
//	            (or "checkpoint":"" if it cannot save on demand, or
//	            "error":"…" if saving failed) and then waits for another
//	            directive
//	stop        exit now (status 0); "reason" is "pause" when hone will
//	            restart the trial later from its checkpoint, else "stop"
//
// hone answers a message it cannot accept with {"type":"error","message":"…"}
// and closes the connection; the trial then fails with that message. This
// happens for a wrong token or trial id, a message that is not JSON or not
// an object, an unknown type, a message out of turn, a message over
// MaxMessageSize, a non-finite metric, and a checkpoint outside
// HONE_STAGING_DIR. A problem with one trial's messages never affects
// another trial or the experiment.
//
// # Stdout fallback
//
// A program that cannot open a socket may print lines
//
//	HONE_REPORT {"metrics":{"loss":0.3},"checkpoint":"…","done":false}
//
// on its standard output instead. Such reports get no directive (training
// continues; hone stops the process with SIGTERM when it must), and the
// process cannot be asked to checkpoint on demand. The same validation
// applies; other stdout lines are only logged.
//
// # Stopping
//
// Besides the stop directive, hone may send SIGTERM to the trial's process
// group, and SIGKILL after a grace period. A trial that exits with a
// non-zero status, or dies from a signal hone did not send, has failed.
package wire
