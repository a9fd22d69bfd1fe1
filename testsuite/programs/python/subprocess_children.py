# subprocess: children started from Python (echo, sh, another python) with
# captured output, stdin, exit statuses and a pipeline between two children.
import os
import signal
import subprocess
import sys

# The parent's own handler must outlive its children: CPython's child
# resets every handler to SIG_DFL between fork and exec, in memory shared
# with the parent (vfork), which an older dgad let reach the parent.
got = []
signal.signal(signal.SIGUSR1, lambda sig, frame: got.append(sig))

r = subprocess.run(["echo", "hello", "from", "echo"], capture_output=True, text=True)
print("echo:", repr(r.stdout), r.returncode)
r = subprocess.run(["sh", "-c", "echo to-stderr >&2; exit 5"], capture_output=True, text=True)
print("sh:", repr(r.stderr), r.returncode)
r = subprocess.run([sys.executable, "-c", "import sys; data = sys.stdin.read(); print(len(data), data.count('x'))"],
                   input="x" * 100000 + "y" * 10, capture_output=True, text=True)
print("python child:", r.stdout.strip(), r.returncode)
p1 = subprocess.Popen(["seq", "1", "5000"], stdout=subprocess.PIPE)
p2 = subprocess.Popen(["sort", "-r", "-n"], stdin=p1.stdout, stdout=subprocess.PIPE)
p1.stdout.close()
out, _ = p2.communicate()
print("pipeline head:", out.split()[:3], "statuses:", p1.wait(), p2.returncode)
try:
    subprocess.run(["false"], check=True)
except subprocess.CalledProcessError as e:
    print("check=True raised with", e.returncode)
print("check_output:", subprocess.check_output(["printf", "%s-%d", "n", "42"]).decode())
os.kill(os.getpid(), signal.SIGUSR1)
print("parent's SIGUSR1 handler ran after the children:", got == [signal.SIGUSR1])
print("END subprocess_children")
