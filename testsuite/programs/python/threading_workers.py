# threading: four threads computing independent results, a lock-protected
# shared counter, a queue and a barrier. Results print in thread order after
# the joins, so output does not depend on scheduling.
import hashlib
import queue
import threading

THREADS = 4
results = [None] * THREADS
counter = 0
counter_lock = threading.Lock()
barrier = threading.Barrier(THREADS)
work = queue.Queue()
done = queue.Queue()


def worker(index):
    global counter
    barrier.wait()
    acc = 0
    for i in range(50_000):
        acc = (acc * 31 + i * (index + 1)) % 1_000_000_007
        with counter_lock:
            counter += 1
    digest = hashlib.sha256(str(acc).encode()).hexdigest()[:16]
    while True:
        item = work.get()
        if item is None:
            break
        done.put(item * item)
    results[index] = (acc, digest)


for n in range(1000):
    work.put(n)
for _ in range(THREADS):
    work.put(None)
threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
for t in threads:
    t.start()
for t in threads:
    t.join()

for i, (acc, digest) in enumerate(results):
    print("thread", i, acc, digest)
print("counter:", counter)
squares = sorted(done.get() for _ in range(done.qsize()))
print("squares:", len(squares), sum(squares))
print("alive after join:", [t.is_alive() for t in threads])
print("END threading_workers")
