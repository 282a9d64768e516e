#include "pending_usage.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "util/read_file.h"
#include "util/text.h"

namespace vgpu {

Result<std::string> PendingUsage::Keep(uint32_t job, const std::string& node,
                                       const std::string& node_comment) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return Result<std::string>::Error("cannot make " + dir_ + ": " + ec.message());
  chmod(dir_.c_str(), 0700);  // root's records
  const std::string path = dir_ + "/" + std::to_string(job) + "." + node + ".json";
  Status st = WriteFileAtomically(path, node_comment + "\n", 0600);
  if (!st.ok()) return Result<std::string>::Error(st.message());
  return path;
}

std::vector<std::pair<uint32_t, std::string>> PendingUsage::Records() const {
  std::vector<std::pair<uint32_t, std::string>> found;
  DIR* d = opendir(dir_.c_str());
  if (!d) return found;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    const size_t dot = name.find('.');
    uint64_t job = 0;
    if (dot == std::string::npos || name.size() < 5 || name.compare(name.size() - 5, 5, ".json") != 0 ||
        !ParseU64(name.substr(0, dot), UINT32_MAX, &job))
      continue;  // not ours (a temporary file of WriteFileAtomically, ...)
    found.emplace_back(static_cast<uint32_t>(job), dir_ + "/" + name);
  }
  closedir(d);
  std::sort(found.begin(), found.end());
  return found;
}

PendingUsage::Flushed PendingUsage::Flush(
    const std::function<std::unique_ptr<CommentStore>(uint32_t job)>& store_for, time_t now,
    std::vector<std::string>* log) const {
  Flushed out;
  const auto records = Records();
  auto note = [log](uint32_t job, const std::string& what) {
    if (log) log->push_back("job " + std::to_string(job) + ": " + what);
  };
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& [job, path] = records[i];
    auto text = ReadTextFile(path);
    if (!text.ok()) continue;  // another epilog took it meanwhile
    std::string comment = *text;
    while (!comment.empty() && comment.back() == '\n') comment.pop_back();
    struct stat sb {};
    const bool old = stat(path.c_str(), &sb) == 0 && now - sb.st_mtime > kMaxAgeSeconds;
    std::unique_ptr<CommentStore> store = store_for(job);
    std::string existing, why;
    const int rc = store->Get(&existing, &why);
    if (rc == CommentStore::kNoJob && !old) {
      ++out.left;  // its record is still in slurmctld's queue
      continue;
    }
    if (rc != CommentStore::kOk && rc != CommentStore::kNoJob) {
      out.left += static_cast<int>(records.size() - i);  // the database is still away
      break;
    }
    auto merged = rc == CommentStore::kOk ? MergeNodeComment(existing, comment)
                                          : Result<std::string>::Error("the job is not in the database after " +
                                                                       std::to_string(kMaxAgeSeconds / 86400) + " days");
    if (!merged.ok()) {
      unlink(path.c_str());
      ++out.dropped;
      note(job, "kept usage dropped (" + path + "): " + merged.message());
      continue;
    }
    if (*merged != existing && store->Set(*merged, &why) != CommentStore::kOk) {
      out.left += static_cast<int>(records.size() - i);
      break;
    }
    unlink(path.c_str());
    ++out.recorded;
    note(job, "kept usage recorded (" + path + ")");
  }
  return out;
}

}  // namespace vgpu
