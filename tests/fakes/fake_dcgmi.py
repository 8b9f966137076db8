#!/usr/bin/env python3
"""A stand-in for NVIDIA's dcgmi, for `gpuvet check --with-dcgm`: answers only
`dcgmi diag -r LEVEL -j`, as the real one does, from a capture file.

    FAKE_DCGMI_OUTPUT=FILE   what to print on standard output (a dcgmi diag -j capture,
                             tests/fakes/dcgmi); unset: nothing
    FAKE_DCGMI_EXIT=N        exit status (default 0; dcgmi's failing run exits 226)
    FAKE_DCGMI_STDERR=TEXT   printed on standard error
    FAKE_DCGMI_BEFORE=TEXT   printed on standard output before the capture (a warning
                             line, a wrapper's banner: what DCGM's own readers skip)
    FAKE_DCGMI_HANG=1        print nothing and never exit (deadline tests)
    FAKE_DCGMI_ARGS=FILE     write the arguments it got there, one per line

Any other command line is refused with exit 255 (DCGM_ST_BADPARAM), as dcgmi does."""
import os
import sys
import time


def main():
    args = sys.argv[1:]
    log = os.environ.get("FAKE_DCGMI_ARGS")
    if log:
        with open(log, "w") as f:
            f.write("\n".join(args) + "\n")
    if len(args) != 4 or args[0] != "diag" or args[1] != "-r" or args[2] not in ("1", "2", "3", "4") or args[3] != "-j":
        print("fake dcgmi: expected: diag -r LEVEL -j, got %s" % " ".join(args), file=sys.stderr)
        return 255
    if os.environ.get("FAKE_DCGMI_HANG") == "1":
        while True:
            time.sleep(3600)
    if os.environ.get("FAKE_DCGMI_STDERR"):
        print(os.environ["FAKE_DCGMI_STDERR"], file=sys.stderr)
    before = os.environ.get("FAKE_DCGMI_BEFORE")
    if before:
        sys.stdout.write(before + "\n")
        sys.stdout.flush()
    out = os.environ.get("FAKE_DCGMI_OUTPUT")
    if out:
        with open(out, "rb") as f:
            sys.stdout.buffer.write(f.read())
    return int(os.environ.get("FAKE_DCGMI_EXIT", "0"))


if __name__ == "__main__":
    sys.exit(main())
