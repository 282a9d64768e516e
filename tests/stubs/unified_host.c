/* libunified_host.so: makes a hybrid cgroup host (v1 hierarchies beside a
 * cgroup2 mount) look like a unified one to the program it is preloaded
 * into. The cgroup v2 lab (tests/cluster, VGPU_LAB_CGROUP=v2) preloads it
 * into slurmd, whose cgroup/v2 plugin refuses a host whose
 * /proc/<pid>/cgroup does not start with the "0::" line ("Hybrid mode is
 * not supported"); slurmstepd inherits it. Reads of /proc/self/cgroup,
 * /proc/thread-self/cgroup and /proc/<pid>/cgroup return only the "0::"
 * line; everything else is untouched. Slurm's binaries and plugins stay
 * stock, and jobs never load it: what a job sees is the host as it is.
 * Only what this machine lacks is simulated: a host booted unified. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int proc_cgroup_path(const char *path) {
	const char *rest;
	if (!path || strncmp(path, "/proc/", 6) != 0) return 0;
	rest = path + 6;
	if (strncmp(rest, "self/", 5) == 0) {
		rest += 5;
	} else if (strncmp(rest, "thread-self/", 12) == 0) {
		rest += 12;
	} else {
		const char *p = rest;
		while (*p >= '0' && *p <= '9') p++;
		if (p == rest || *p != '/') return 0;
		rest = p + 1;
	}
	return strcmp(rest, "cgroup") == 0;
}

/* The "0::" line of the file that `real_fd` reads, in a memfd; -1 (errno
 * set) when it cannot be read. Closes real_fd. */
static int unified_only(int real_fd, int flags) {
	char in[16384], out[4096];
	size_t got = 0, kept = 0;
	ssize_t n;
	int fd;
	while (got < sizeof(in) - 1 && (n = read(real_fd, in + got, sizeof(in) - 1 - got)) > 0) got += (size_t)n;
	close(real_fd);
	in[got] = '\0';
	for (char *line = in; line && *line;) {
		char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line + 1) : strlen(line);
		if (strncmp(line, "0::", 3) == 0 && kept + len <= sizeof(out)) {
			memcpy(out + kept, line, len);
			kept += len;
		}
		line = end ? end + 1 : NULL;
	}
	fd = memfd_create("cgroup", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
	if (fd < 0) return -1;
	if (write(fd, out, kept) != (ssize_t)kept || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

typedef int (*openat_fn)(int, const char *, int, ...);

static int open_filtered(int dirfd, const char *path, int flags, mode_t mode) {
	static openat_fn real;
	int fd;
	if (!real) real = (openat_fn)dlsym(RTLD_NEXT, "openat");
	fd = real(dirfd, path, flags, mode);
	if (fd < 0 || !proc_cgroup_path(path) || (flags & O_ACCMODE) != O_RDONLY) return fd;
	return unified_only(fd, flags);
}

static mode_t mode_arg(int flags, va_list ap) {
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

/* The body of each variadic open: its mode argument, then open_filtered. */
#define OPEN_FILTERED(dirfd)                          \
	do {                                          \
		va_list ap;                           \
		va_start(ap, flags);                  \
		mode_t mode = mode_arg(flags, ap);    \
		va_end(ap);                           \
		return open_filtered(dirfd, path, flags, mode); \
	} while (0)

int open(const char *path, int flags, ...) { OPEN_FILTERED(AT_FDCWD); }
int open64(const char *path, int flags, ...) { OPEN_FILTERED(AT_FDCWD); }
int openat(int dirfd, const char *path, int flags, ...) { OPEN_FILTERED(dirfd); }
int openat64(int dirfd, const char *path, int flags, ...) { OPEN_FILTERED(dirfd); }
int __open_2(const char *path, int flags) { return open_filtered(AT_FDCWD, path, flags, 0); }
int __open64_2(const char *path, int flags) { return open_filtered(AT_FDCWD, path, flags, 0); }

FILE *fopen(const char *path, const char *how) {
	static FILE *(*real)(const char *, const char *);
	if (!real) real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
	if (proc_cgroup_path(path) && strcmp(how, "r") == 0) {
		int fd = open_filtered(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
		return fd < 0 ? NULL : fdopen(fd, "r");
	}
	return real(path, how);
}
FILE *fopen64(const char *path, const char *how) { return fopen(path, how); }
