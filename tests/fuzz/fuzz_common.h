// What the libFuzzer targets of tests/fuzz share (README.md there).
//
// - fuzz::Run(body): runs one input. The libraries promise that nothing
//   throws across their interfaces (util/status.h), so an exception that
//   escapes `body` is a finding: it is printed with its what() and the run
//   aborts, which libFuzzer reports as a crash and saves the input.
// - FUZZ_CHECK(condition, detail): an invariant of the code under test;
//   when it does not hold, the same.
// - fuzz::Text, fuzz::Lines, fuzz::SplitAt: the input as text, in pieces.
// - fuzz::SmallCatalog(): three chip models (nvidia, ascend, dcu) built in
//   code, for the targets that need a catalog.
#ifndef VGPU_TESTS_FUZZ_FUZZ_COMMON_H_
#define VGPU_TESTS_FUZZ_FUZZ_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "devices/chip_catalog.h"

#define FUZZ_CHECK(condition, detail)                                   \
  do {                                                                  \
    if (!(condition)) ::fuzz::Fail(__FILE__, __LINE__, #condition, (detail)); \
  } while (0)

namespace fuzz {

[[noreturn]] inline void Fail(const char* file, int line, const char* condition, const std::string& detail) {
  std::fprintf(stderr, "%s:%d: invariant does not hold: %s\n  %s\n", file, line, condition, detail.c_str());
  std::abort();
}

template <typename Body>
int Run(Body body) {
  try {
    body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: an exception escaped the code under test: %s\n", e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "fuzz: an exception that is not a std::exception escaped the code under test\n");
    std::abort();
  }
  return 0;
}

inline std::string Text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// `text` cut at every '\n' (a last line without one counts; no line after a
// final '\n').
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Cuts `text` at its first line that is exactly `separator`: the text before
// it into *before, after it into *after. False (all of it in *before) when
// there is no such line.
inline bool SplitAt(const std::string& text, const std::string& separator, std::string* before, std::string* after) {
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, end - at, separator) == 0) {
      *before = text.substr(0, at);
      *after = end < text.size() ? text.substr(end + 1) : "";
      return true;
    }
    if (end == text.size()) break;
    at = end + 1;
  }
  *before = text;
  after->clear();
  return false;
}

inline vgpu::ChipModel Model(const char* id, const char* gres_type, const char* name, const char* device_file,
                             const char* env, uint64_t memory_bytes, uint32_t compute_units) {
  vgpu::ChipModel m;
  m.id = id;
  m.vendor = gres_type;
  m.gres_type = gres_type;
  m.names = {name};
  m.memory_bytes = memory_bytes;
  m.compute_units = compute_units;
  m.device_file = device_file;
  m.visible_devices_env = env;
  m.discovery = "none";
  m.source = std::string("fuzz:") + id;
  return m;
}

inline vgpu::ChipCatalog SmallCatalog() {
  vgpu::ChipCatalog catalog;
  vgpu::ChipModel h100 = Model("nvidia-h100", "nvidia", "NVIDIA H100 80GB HBM3", "/dev/nvidia%d",
                               "CUDA_VISIBLE_DEVICES", 85899345920ull, 132);
  h100.profiles = {{"1g.10gb", 14, 10737418240ull, 16}, {"3g.40gb", 43, 42949672960ull, 60}};
  catalog.Add(h100);
  catalog.Add(Model("ascend-910b", "ascend", "Ascend910B", "/dev/davinci%d", "ASCEND_RT_VISIBLE_DEVICES",
                    68719476736ull, 24));
  catalog.Add(Model("hygon-k100", "dcu", "K100", "/dev/dri/renderD%d", "HIP_VISIBLE_DEVICES", 68719476736ull, 120));
  return catalog;
}

}  // namespace fuzz

#endif  // VGPU_TESTS_FUZZ_FUZZ_COMMON_H_
