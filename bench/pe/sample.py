#!/usr/bin/env python3
"""Runs one command (a PE or YCSB client JVM) while sampling the CPU time of a server process
and of the command itself, so bench/pe/report.py can charge the server only for the client's
timed window (PE's log says when each thread's timed test started and finished; JVM start-up,
connection set-up and region lookups before it are left out).

  sample.py --pid SERVER_PID --out FILE.json [--interval 0.05] -- COMMAND [ARGS...]

FILE.json: {"clk_tck", "samples": [[unix_time, server_ticks, client_ticks], ...],
"client_user_s", "client_sys_s", "wall_s", "rc"}; ticks are user + system clock ticks of the
whole process (every thread) from /proc/PID/stat; the client's user/system seconds come from
the kernel's accounting of the reaped child. Exits with the command's status.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time


def ticks(pid):
    """User + system clock ticks of a process, or None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[11]) + int(fields[12])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--interval", type=float, default=0.05)
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        p.error("no command")
    samples = []
    started = time.time()
    child = subprocess.Popen(cmd)
    last_client = 0
    while True:
        now = time.time()
        c = ticks(child.pid)
        last_client = c if c is not None else last_client
        samples.append([now, ticks(a.pid), last_client])
        if child.poll() is not None:
            break
        time.sleep(a.interval)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(a.out, "w") as f:
        json.dump({"clk_tck": os.sysconf("SC_CLK_TCK"), "samples": samples,
                   "client_user_s": ru.ru_utime, "client_sys_s": ru.ru_stime,
                   "wall_s": time.time() - started, "rc": child.returncode}, f)
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()
