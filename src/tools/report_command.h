// `vgpuctl report`: its options, how it runs sacct, and the whole command
// (manual: doc/vgpuctl.1).
#ifndef VGPU_TOOLS_REPORT_COMMAND_H_
#define VGPU_TOOLS_REPORT_COMMAND_H_

#include <ctime>
#include <ostream>
#include <string>
#include <vector>

#include "usage_report.h"
#include "util/status.h"

namespace vgpu::report {

extern const char kReportUsage[];  // the text of `vgpuctl report --help`

enum class Format { kTable, kCsv, kJson };

struct ReportOptions {
  std::vector<GroupBy> groups;  // tables in this order; default user, account, type
  Format format = Format::kTable;
  std::string since;            // sacct -S; default local midnight of `now`
  std::string until;            // sacct -E; "" = not passed
  std::string svg;              // chart file; "" = none
  std::string input;            // sacct JSON file instead of running sacct
  std::string sacct;            // --sacct PATH; "" = look it up
  bool help = false;
};

// The arguments after "report": `--opt VALUE` or `--opt=VALUE`, -h/--help.
// `--by` takes user, account, type or a comma-separated list of them.
// Errors name the option and the fix ("unknown option --x; see vgpuctl
// report --help").
Result<ReportOptions> ParseReportArgs(const std::vector<std::string>& args, std::time_t now);

// sacct's path: --sacct when given (it must be an executable file), else
// the first sacct on `path_env` (PATH; null = unset, nothing searched),
// else /usr/bin/sacct; an error naming the fix when there is none.
Result<std::string> LocateSacct(const std::string& given, const char* path_env);

// {sacct, "--json", "-a", "-S", since} and "-E", until when given.
std::vector<std::string> SacctArgv(const std::string& sacct, const ReportOptions& o);

// The command: parses `args`, reads the jobs (sacct or --input), writes the
// report to `out` (and the chart to --svg), problems to `err` as one line
// "vgpuctl report: ..." each. Returns the exit status: 0 done (a note on
// `err` when jobs carry usage but no vgpu TRES), 1 sacct missing or
// failing, input unreadable or malformed, chart not written; 2 bad
// arguments. Local midnight of `now` is the default --since.
int RunReport(const std::vector<std::string>& args, std::time_t now, std::ostream& out, std::ostream& err);

}  // namespace vgpu::report

#endif  // VGPU_TOOLS_REPORT_COMMAND_H_
