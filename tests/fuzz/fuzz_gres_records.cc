// Fuzzes how gres/vgpu reads a node's gres.conf records: the File= range
// syntax (vgpu::ExpandFileRange, devices/file_range.h), the line locator
// (vgpu::GresConfLocator, FindByFile and AllByFile) and the share layout
// (vgpu::BuildShareLayout, devices/share_layout.h). The input is
//   <gres.conf text>            for the locator
//   %%
//   [shares=<S>]                optional; 1..1024, default 100
//   name|type|file|count[|cores]   one merged record per line, as Slurm
//                               hands them to the plugin
// with a three-model catalog (fuzz_common.h), two devices discovery found
// (/dev/nvidia0, /dev/davinci1), node n1, and every device file present but
// those whose name holds "missing".
//
// Asserts, besides no crash, sanitizer report or escaping exception:
// - a File= that expands gives non-empty names, at most 4,097 per item;
// - what the locator finds for a file lists that file, and is among
//   AllByFile's lines for it;
// - the layout passes other GRES records through unchanged and in order;
//   each vgpu record it emits is one device file with Count=S, no file
//   twice; the device table has those devices in the same order, its bits
//   contiguous from 0 and at most 1,024; and the table survives its text
//   form (Serialize, Parse).
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "devices/file_range.h"
#include "devices/gres_conf_locator.h"
#include "devices/share_layout.h"
#include "fuzz_common.h"
#include "util/text.h"

namespace {

void CheckExpansion(const std::string& expression) {
  auto files = vgpu::ExpandFileRange(expression);
  if (!files.ok()) {
    FUZZ_CHECK(!files.message().empty(), expression);
    return;
  }
  const size_t items = static_cast<size_t>(std::count(expression.begin(), expression.end(), ',')) + 1;
  FUZZ_CHECK(!files->empty() && files->size() <= items * 4097, expression);
  for (const std::string& f : *files) FUZZ_CHECK(!f.empty(), expression);
}

std::vector<vgpu::GresRecord> DecodeRecords(const std::string& text, uint32_t* shares) {
  std::vector<vgpu::GresRecord> records;
  for (const std::string& line : fuzz::Lines(text)) {
    if (line.rfind("shares=", 0) == 0) {
      uint64_t v = 0;
      if (vgpu::ParseU64(line.substr(7), 1024, &v) && v >= 1) *shares = static_cast<uint32_t>(v);
      continue;
    }
    std::vector<std::string> f;
    size_t start = 0;
    while (true) {
      size_t bar = line.find('|', start);
      f.push_back(line.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
    if (f.size() < 4) continue;
    vgpu::GresRecord r;
    r.name = f[0];
    r.type = f[1];
    r.file = f[2];
    if (!vgpu::ParseU64(f[3], UINT64_MAX, &r.count)) r.count = 0;
    if (f.size() > 4) r.cpus = f[4];
    records.push_back(r);
  }
  return records;
}

bool SameRecord(const vgpu::GresRecord& a, const vgpu::GresRecord& b) {
  return a.name == b.name && a.type == b.type && a.file == b.file && a.cpus == b.cpus && a.count == b.count;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::Run([&] {
    std::string conf, records_text;
    fuzz::SplitAt(fuzz::Text(data, size), "%%", &conf, &records_text);
    uint32_t shares = 100;
    const std::vector<vgpu::GresRecord> merged = DecodeRecords(records_text, &shares);

    const vgpu::GresConfLocator locator("gres.conf", conf);
    for (const vgpu::GresRecord& r : merged) {
      if (r.file.empty()) continue;
      CheckExpansion(r.file);
      auto files = vgpu::ExpandFileRange(r.file);
      if (!files.ok()) continue;
      for (const std::string& f : *files) {
        const vgpu::GresConfLine* line = locator.FindByFile("n1", r.name, f);
        std::vector<const vgpu::GresConfLine*> all = locator.AllByFile("n1", f);
        if (line == nullptr) continue;
        FUZZ_CHECK(std::find(line->files.begin(), line->files.end(), f) != line->files.end(), f);
        FUZZ_CHECK(std::find(all.begin(), all.end(), line) != all.end(), f);
        FUZZ_CHECK(line->number >= 1 && !locator.Describe(line, "").empty(), f);
      }
    }

    const vgpu::ChipCatalog catalog = fuzz::SmallCatalog();
    vgpu::ShareLayoutInput in;
    in.node_name = "n1";
    in.shares_per_device = shares;
    in.catalog = &catalog;
    in.locator = &locator;
    in.file_exists = [](const std::string& f) { return f.find("missing") == std::string::npos; };
    vgpu::Device gpu;
    gpu.source = "inventory";
    gpu.model_id = "nvidia-h100";
    gpu.name = "NVIDIA H100 80GB HBM3";
    gpu.gres_type = "nvidia";
    gpu.vendor_index = 0;
    gpu.uuid = "GPU-0";
    gpu.files = {"/dev/nvidia0"};
    gpu.memory_bytes = 85899345920ull;
    vgpu::Device npu = gpu;
    npu.model_id = "ascend-910b";
    npu.name = "Ascend910B";
    npu.gres_type = "ascend";
    npu.vendor_index = 1;
    npu.uuid = "";
    npu.files = {"/dev/davinci1"};
    npu.cpus = "0-3";
    in.discovered = {gpu, npu};

    const vgpu::ShareLayout layout = vgpu::BuildShareLayout(merged, in);

    std::vector<const vgpu::GresRecord*> others_in, others_out, vgpu_out;
    for (const vgpu::GresRecord& r : merged)
      if (vgpu::Lower(r.name) != vgpu::kGresName) others_in.push_back(&r);
    for (const vgpu::GresRecord& r : layout.records) {
      FUZZ_CHECK(r.origin < merged.size(), "a record of no origin");
      (vgpu::Lower(r.name) == vgpu::kGresName ? vgpu_out : others_out).push_back(&r);
    }
    FUZZ_CHECK(others_in.size() == others_out.size(), "other GRES records lost or added");
    for (size_t i = 0; i < others_in.size(); ++i)
      FUZZ_CHECK(SameRecord(*others_in[i], *others_out[i]), "another GRES's record changed: " + others_in[i]->name);

    const std::vector<vgpu::ShareDevice>& table = layout.table.devices();
    FUZZ_CHECK(table.size() == vgpu_out.size(), "device table and vgpu records disagree");
    std::set<std::string> files;
    uint32_t next_bit = 0;
    for (size_t i = 0; i < vgpu_out.size(); ++i) {
      const vgpu::GresRecord& r = *vgpu_out[i];
      FUZZ_CHECK(r.count == shares, r.file + ": Count=" + std::to_string(r.count));
      FUZZ_CHECK(files.insert(r.file).second, "device file " + r.file + " shared twice");
      FUZZ_CHECK(table[i].first_bit == next_bit && table[i].shares == shares, r.file);
      FUZZ_CHECK(!table[i].device.files.empty() && table[i].device.files[0] == r.file, r.file);
      next_bit += table[i].shares;
    }
    FUZZ_CHECK(next_bit <= vgpu::kMaxGresBitsPerNode, std::to_string(next_bit) + " bits");
    FUZZ_CHECK(layout.table.total_bits() == next_bit, "total_bits");

    auto table_again = vgpu::DeviceTable::Parse(layout.table.Serialize());
    FUZZ_CHECK(table_again.ok(), table_again.message());
    FUZZ_CHECK(table_again->Serialize() == layout.table.Serialize(), "the device table changes in its text form");
  });
}
