// How a hook is exported: C linkage, default visibility (the library is
// built with -fvisibility=hidden, so nothing else leaks into programs).
#ifndef VGPU_INTERPOSER_EXPORT_H_
#define VGPU_INTERPOSER_EXPORT_H_

#define VGPU_HOOK extern "C" __attribute__((visibility("default")))

#endif  // VGPU_INTERPOSER_EXPORT_H_
