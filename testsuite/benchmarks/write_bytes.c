/* write_bytes PATH BYTES CHUNK: writes BYTES bytes to a new file PATH with
 * pwrite calls of CHUNK bytes, as dgad's tape writer does, and leaves it
 * (removing 2 GB is not part of writing them, as it is not part of a
 * recording). scripts/bench_record.py times it beside a recording that
 * writes as many bytes of tape: what the file system takes for them
 * without dgad. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: write_bytes PATH BYTES CHUNK\n");
        return 2;
    }
    size_t total = strtoull(argv[2], NULL, 10), chunk = strtoull(argv[3], NULL, 10);
    char *buf = malloc(chunk);
    if (buf == NULL || chunk == 0) {
        perror("write_bytes: buffer");
        return 1;
    }
    memset(buf, 0x5a, chunk);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    for (size_t off = 0; off < total; off += chunk) {
        size_t n = total - off < chunk ? total - off : chunk;
        if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n) {
            perror("write_bytes: pwrite");
            return 1;
        }
    }
    if (close(fd) != 0) {
        perror("write_bytes: close");
        return 1;
    }
    return 0;
}
