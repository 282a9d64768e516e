#include "real_symbols.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace vgpu {
namespace interposer {
namespace {

void* Open(const char* soname) {
  // Loaded already (the program linked or dlopened it): use that copy.
  void* h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
  return h ? h : dlopen(soname, RTLD_LAZY);
}

// The GNU hash of a symbol name (the ELF gABI extension glibc uses).
uint32_t GnuHash(const char* name) {
  uint32_t h = 5381;
  for (const unsigned char* c = reinterpret_cast<const unsigned char*>(name); *c; ++c) h = h * 33 + *c;
  return h;
}

struct LibcLookup {
  const char* name;
  void* found;
};

// `name`, defined in libc.so.6, found through its GNU hash table. libvgpu.so
// exports dlsym and dlvsym itself, so it cannot ask the dynamic linker for
// glibc's without being handed its own.
int FindInLibc(dl_phdr_info* info, size_t, void* data) {
  auto* lookup = static_cast<LibcLookup*>(data);
  if (!info->dlpi_name || !std::strstr(info->dlpi_name, "libc.so.6")) return 0;
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (!dynamic) return 0;
  // The dynamic linker relocates these entries in place on most targets;
  // where it does not, they are offsets from the load address.
  auto address = [&](ElfW(Addr) p) { return p < info->dlpi_addr ? p + info->dlpi_addr : p; };
  const ElfW(Sym)* symbols = nullptr;
  const char* strings = nullptr;
  const uint32_t* gnu_hash = nullptr;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_SYMTAB) symbols = reinterpret_cast<const ElfW(Sym)*>(address(d->d_un.d_ptr));
    if (d->d_tag == DT_STRTAB) strings = reinterpret_cast<const char*>(address(d->d_un.d_ptr));
    if (d->d_tag == DT_GNU_HASH) gnu_hash = reinterpret_cast<const uint32_t*>(address(d->d_un.d_ptr));
  }
  if (!symbols || !strings || !gnu_hash) return 1;
  const uint32_t buckets = gnu_hash[0], offset = gnu_hash[1], bloom_words = gnu_hash[2];
  const auto* bucket = reinterpret_cast<const uint32_t*>(reinterpret_cast<const ElfW(Addr)*>(gnu_hash + 4) + bloom_words);
  const uint32_t* chain = bucket + buckets;
  const uint32_t h = GnuHash(lookup->name);
  for (uint32_t i = bucket[h % buckets]; i >= offset && buckets; ++i) {
    const uint32_t h2 = chain[i - offset];
    const ElfW(Sym)& sym = symbols[i];
    if ((h | 1) == (h2 | 1) && sym.st_shndx != SHN_UNDEF && std::strcmp(strings + sym.st_name, lookup->name) == 0) {
      lookup->found = reinterpret_cast<void*>(info->dlpi_addr + sym.st_value);
      return 1;
    }
    if (h2 & 1) break;
  }
  return 1;
}

}  // namespace

void* LibcSymbol(const char* name) {
  LibcLookup lookup{name, nullptr};
  dl_iterate_phdr(FindInLibc, &lookup);
  return lookup.found;
}

DlsymFn RealDlsym() {
  static const DlsymFn real = reinterpret_cast<DlsymFn>(LibcSymbol("dlsym"));
  return real;
}

DlvsymFn RealDlvsym() {
  static const DlvsymFn real = reinterpret_cast<DlvsymFn>(LibcSymbol("dlvsym"));
  return real;
}

void* RealSymbol(Vendor vendor, const char* name) {
  static void* const cuda = Open("libcuda.so.1");
  static void* const nvml = Open("libnvidia-ml.so.1");
  static void* const hip = Open("libamdhip64.so");
  static void* const acl = Open("libascendcl.so");
  void* handle = vendor == Vendor::kCuda  ? cuda
                 : vendor == Vendor::kNvml ? nvml
                 : vendor == Vendor::kHip  ? hip
                                           : acl;
  DlsymFn real_dlsym = RealDlsym();
  return handle && real_dlsym ? real_dlsym(handle, name) : nullptr;
}

}  // namespace interposer
}  // namespace vgpu
