// vgpuctl report: options, sacct, outputs (see report_command.h).
#include "report_command.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "report_format.h"
#include "svg_plot.h"
#include "util/read_file.h"
#include "util/run_command.h"
#include "util/text.h"

namespace vgpu::report {

const char kReportUsage[] =
    "usage: vgpuctl report [--since DATE] [--until DATE] [--by user|account|type[,...]]\n"
    "                      [--format table|csv|json] [--svg FILE] [--input FILE] [--sacct PATH]\n"
    "Requested and used vgpu share-hours (100 shares = one device) and device memory, per\n"
    "user, account and accelerator type, from sacct and the usage the slurm-vgpu epilog\n"
    "records in each job's AdminComment. DATE is any sacct -S/-E time (default --since:\n"
    "midnight today). --input reads a saved `sacct --json` output instead of running sacct.\n";

namespace {

#ifndef VGPU_SLURM_BINDIR
#define VGPU_SLURM_BINDIR "/usr/bin"
#endif
// The sacct of the Slurm this program was built against, when PATH has none.
constexpr char kDefaultSacct[] = VGPU_SLURM_BINDIR "/sacct";

Result<std::vector<GroupBy>> ParseGroups(const std::string& value) {
  std::vector<GroupBy> groups;
  size_t from = 0;
  while (from <= value.size()) {
    size_t comma = value.find(',', from);
    if (comma == std::string::npos) comma = value.size();
    std::string name = Lower(Trim(value.substr(from, comma - from)));
    GroupBy g;
    if (name == "user") g = GroupBy::kUser;
    else if (name == "account") g = GroupBy::kAccount;
    else if (name == "type") g = GroupBy::kType;
    else return Result<std::vector<GroupBy>>::Error("--by: \"" + name + "\" is not user, account or type");
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
    from = comma + 1;
  }
  return groups;
}

// YYYY-MM-DDT00:00:00 of `now`'s local day.
std::string LocalMidnight(std::time_t now) {
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT00:00:00", &tm);
  return buf;
}


Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) return Status::Error("cannot write " + path + "; check that its directory exists and is writable");
  return Status::Ok();
}

// The sacct JSON text, from --input or from running sacct.
Result<std::string> ReadJobs(const ReportOptions& o) {
  if (!o.input.empty()) return ReadTextFile(o.input);
  Result<std::string> sacct = LocateSacct(o.sacct, std::getenv("PATH"));
  if (!sacct.ok()) return sacct.status();
  auto ran = RunCommand(SacctArgv(*sacct, o));
  if (!ran.ok())
    return Result<std::string>::Error(ran.message() + "; check the Slurm client installation or pass --sacct PATH");
  if (ran->exit_status != 0)
    return Result<std::string>::Error(
        *sacct + " exited with status " + std::to_string(ran->exit_status) + ": " +
        LastLine(ran->err, "(no message)") +
        "; check that slurmdbd is reachable (sacctmgr show cluster) and the --since/--until dates, "
        "or read a saved `sacct --json` output with --input FILE");
  return std::move(ran->out);
}

}  // namespace

Result<ReportOptions> ParseReportArgs(const std::vector<std::string>& args, std::time_t now) {
  using R = Result<ReportOptions>;
  ReportOptions o;
  bool by_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string opt = args[i], value;
    if (opt == "-h" || opt == "--help") {
      o.help = true;
      continue;
    }
    size_t eq = opt.find('=');
    bool inline_value = opt.rfind("--", 0) == 0 && eq != std::string::npos;
    if (inline_value) value = opt.substr(eq + 1), opt = opt.substr(0, eq);
    static const char* const kKnown[] = {"--since", "--until", "--by", "--format", "--svg", "--input", "--sacct"};
    if (std::find(std::begin(kKnown), std::end(kKnown), opt) == std::end(kKnown))
      return R::Error((opt.rfind("-", 0) == 0 ? "unknown option " : "unexpected argument ") + opt +
                      "; see vgpuctl report --help");
    if (!inline_value) {
      if (i + 1 >= args.size()) return R::Error(opt + " needs a value; see vgpuctl report --help");
      value = args[++i];
    }
    if (value.empty()) return R::Error(opt + " needs a non-empty value; see vgpuctl report --help");
    if (opt == "--since") o.since = value;
    else if (opt == "--until") o.until = value;
    else if (opt == "--svg") o.svg = value;
    else if (opt == "--input") o.input = value;
    else if (opt == "--sacct") o.sacct = value;
    else if (opt == "--format") {
      if (value == "table") o.format = Format::kTable;
      else if (value == "csv") o.format = Format::kCsv;
      else if (value == "json") o.format = Format::kJson;
      else return R::Error("--format: \"" + value + "\" is not table, csv or json");
    } else if (opt == "--by") {
      auto groups = ParseGroups(value);
      if (!groups.ok()) return groups.status();
      o.groups = *groups;
      by_given = true;
    }
  }
  if (!by_given) o.groups = {GroupBy::kUser, GroupBy::kAccount, GroupBy::kType};
  if (o.since.empty()) o.since = LocalMidnight(now);
  return o;
}

Result<std::string> LocateSacct(const std::string& given, const char* path_env) {
  if (!given.empty()) {
    if (!IsExecutableFile(given))
      return Result<std::string>::Error("--sacct " + given + ": not an executable file; give the path of Slurm's sacct");
    return given;
  }
  if (path_env != nullptr) {
    std::string found = FindOnPath("sacct", path_env);
    if (!found.empty()) return found;
  }
  if (IsExecutableFile(kDefaultSacct)) return std::string(kDefaultSacct);
  return Result<std::string>::Error(
      std::string("sacct not found on PATH nor at ") + kDefaultSacct + "; install Slurm's client commands, pass --sacct PATH, "
      "or read a saved `sacct --json` output with --input FILE");
}

std::vector<std::string> SacctArgv(const std::string& sacct, const ReportOptions& o) {
  std::vector<std::string> argv = {sacct, "--json", "-a", "-S", o.since};
  if (!o.until.empty()) argv.insert(argv.end(), {"-E", o.until});
  return argv;
}

int RunReport(const std::vector<std::string>& args, std::time_t now, std::ostream& out, std::ostream& err) {
  auto fail = [&](const std::string& message, int status) {
    err << "vgpuctl report: " << message << std::endl;
    return status;
  };
  Result<ReportOptions> parsed = ParseReportArgs(args, now);
  if (!parsed.ok()) return fail(parsed.message(), 2);
  const ReportOptions& o = *parsed;
  if (o.help) {
    out << kReportUsage;
    return 0;
  }

  Result<std::string> text = ReadJobs(o);
  if (!text.ok()) return fail(text.message(), 1);
  const std::string what = o.input.empty() ? "the output of sacct --json" : o.input;
  if (Trim(*text).empty()) return fail(what + " is empty; expected the output of sacct --json", 1);
  Result<std::vector<JobRecord>> jobs = ParseSacctJson(*text);
  if (!jobs.ok())
    return fail(what + " " + jobs.message() +
                    (o.input.empty() ? "; check that this sacct is Slurm 21.08 or later (--json)"
                                     : "; pass a file written by sacct --json"),
                1);

  Summary s = Summarise(*jobs);
  ReportSource source;
  if (o.input.empty()) source.since = o.since, source.until = o.until;
  else source.input = o.input;
  switch (o.format) {
    case Format::kTable: out << FormatTable(s, o.groups, source); break;
    case Format::kCsv: out << FormatCsv(s, o.groups); break;
    case Format::kJson: out << FormatJson(s, o.groups, source); break;
  }
  out.flush();
  if (s.usage_without_vgpu > 0)
    err << "vgpuctl report: note: " << s.usage_without_vgpu
        << " job record(s) carry vgpu usage but no gres/vgpu TRES and are left out; add "
           "gres/vgpu,gres/vgpu:<type>... to AccountingStorageTRES in slurm.conf"
        << std::endl;
  if (!o.svg.empty()) {
    Status w = WriteFile(o.svg, sim::RenderBarSvg(MakeUserChart(s)));
    if (!w.ok()) return fail(w.message(), 1);
  }
  return 0;
}

}  // namespace vgpu::report
