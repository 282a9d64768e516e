// exec and spawn: in a vgpu job, a program started from a limited one is
// limited too. A process that unsets or edits LD_PRELOAD before exec would
// otherwise start its next program without libvgpu.so; these hooks put it
// back into the environment the new program gets. (With /etc/ld.so.preload
// this is moot; a static binary or a raw execve system call still goes
// around both, see doc/enforcement.md.)
#include <dlfcn.h>
#include <spawn.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "enforcer.h"
#include "export.h"
#include "launch_pacer.h"
#include "real_symbols.h"

extern char** environ;

namespace vgpu {
namespace interposer {
namespace {

template <typename F>
F Real(const char* name) {
  return reinterpret_cast<F>(RealDlsym()(RTLD_NEXT, name));
}

// This library's path as the dynamic linker loaded it.
const std::string& OwnPath() {
  // Never freed: a program may exec from an atexit handler.
  static const std::string& path = *[] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&OwnPath), &info) && info.dli_fname) return new std::string(info.dli_fname);
    return new std::string();
  }();
  return path;
}

bool InJob() { return Enforcer::Get().mode() != Enforcer::Mode::kInactive && !OwnPath().empty(); }

// LD_PRELOAD's value with this library in it (first), from `current`
// (null: unset). Empty when nothing needs to change.
std::string WithOurselves(const char* current) {
  const std::string& ours = OwnPath();
  std::string value = current ? current : "";
  // Already there as a whole entry (entries are separated by ':' or ' ').
  size_t at = 0;
  while ((at = value.find(ours, at)) != std::string::npos) {
    const bool starts = at == 0 || value[at - 1] == ':' || value[at - 1] == ' ';
    const size_t end = at + ours.size();
    const bool ends = end == value.size() || value[end] == ':' || value[end] == ' ';
    if (starts && ends) return "";
    at = end;
  }
  return value.empty() ? ours : ours + ":" + value;
}

// `envp` with LD_PRELOAD fixed; `storage` keeps the new entry alive.
char* const* FixedEnv(char* const* envp, std::vector<char*>* out, std::string* storage) {
  if (!envp || !InJob()) return envp;
  const char* current = nullptr;
  size_t index = static_cast<size_t>(-1);
  for (size_t i = 0; envp[i]; ++i) {
    out->push_back(envp[i]);
    if (std::strncmp(envp[i], "LD_PRELOAD=", 11) == 0) {
      current = envp[i] + 11;
      index = i;
    }
  }
  const std::string value = WithOurselves(current);
  if (value.empty()) {
    out->clear();
    return envp;
  }
  *storage = "LD_PRELOAD=" + value;
  if (index == static_cast<size_t>(-1))
    out->push_back(&(*storage)[0]);
  else
    (*out)[index] = &(*storage)[0];
  out->push_back(nullptr);
  return out->data();
}

// For calls that take the process's own environment (system, popen, and
// the exec forms without envp): fix it in place.
void FixOwnEnvironment() {
  if (!InJob()) return;
  const std::string value = WithOurselves(getenv("LD_PRELOAD"));
  if (!value.empty()) setenv("LD_PRELOAD", value.c_str(), 1);
}

std::vector<char*> CollectArgs(const char* first, va_list ap, char*** envp) {
  std::vector<char*> args{const_cast<char*>(first)};
  while (char* a = va_arg(ap, char*)) args.push_back(a);
  args.push_back(nullptr);
  if (envp) *envp = va_arg(ap, char**);
  return args;
}

}  // namespace
}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

// Before exec, the outstanding launches are charged: the new image starts
// afresh and would never see them.
VGPU_HOOK int execve(const char* path, char* const argv[], char* const envp[]) {
  static const auto real = Real<int (*)(const char*, char* const*, char* const*)>("execve");
  LaunchPacer::FlushAll();
  std::vector<char*> env;
  std::string entry;
  return real(path, argv, FixedEnv(envp, &env, &entry));
}

VGPU_HOOK int execvpe(const char* file, char* const argv[], char* const envp[]) {
  static const auto real = Real<int (*)(const char*, char* const*, char* const*)>("execvpe");
  LaunchPacer::FlushAll();
  std::vector<char*> env;
  std::string entry;
  return real(file, argv, FixedEnv(envp, &env, &entry));
}

VGPU_HOOK int execv(const char* path, char* const argv[]) { return execve(path, argv, environ); }
VGPU_HOOK int execvp(const char* file, char* const argv[]) { return execvpe(file, argv, environ); }

VGPU_HOOK int execl(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> args = CollectArgs(arg, ap, nullptr);
  va_end(ap);
  return execve(path, args.data(), environ);
}

VGPU_HOOK int execlp(const char* file, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> args = CollectArgs(arg, ap, nullptr);
  va_end(ap);
  return execvpe(file, args.data(), environ);
}

VGPU_HOOK int execle(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  char** envp = nullptr;
  std::vector<char*> args = CollectArgs(arg, ap, &envp);
  va_end(ap);
  return execve(path, args.data(), envp);
}

VGPU_HOOK int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
                          const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  static const auto real = Real<int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*,
                                        const posix_spawnattr_t*, char* const*, char* const*)>("posix_spawn");
  std::vector<char*> env;
  std::string entry;
  return real(pid, path, actions, attr, argv, FixedEnv(envp, &env, &entry));
}

VGPU_HOOK int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
                           const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  static const auto real = Real<int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*,
                                        const posix_spawnattr_t*, char* const*, char* const*)>("posix_spawnp");
  std::vector<char*> env;
  std::string entry;
  return real(pid, file, actions, attr, argv, FixedEnv(envp, &env, &entry));
}

VGPU_HOOK int system(const char* command) {
  static const auto real = Real<int (*)(const char*)>("system");
  FixOwnEnvironment();
  return real(command);
}

VGPU_HOOK FILE* popen(const char* command, const char* type) {
  static const auto real = Real<FILE* (*)(const char*, const char*)>("popen");
  FixOwnEnvironment();
  return real(command, type);
}
