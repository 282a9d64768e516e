// Reading the JSON that Slurm's commands print (sacct, squeue, sinfo and
// scontrol --json) across releases: 22.05's openapi v0.0.38 writes plain
// numbers and strings, later data_parser versions wrap numbers as
// {"set": true, "infinite": false, "number": N} and states as arrays.
#ifndef VGPU_TOOLS_SLURM_JSON_H_
#define VGPU_TOOLS_SLURM_JSON_H_

#include <json/json.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace vgpu::slurm_json {

// `text` parsed as one JSON value, or the parser's message on one line.
// Never throws: jsoncpp's parser throws for nesting past its stack limit,
// which is caught here and becomes the error.
Result<Json::Value> Parse(const std::string& text);

// A number: a JSON number, or {"set": true, "number": N}; nullopt for null,
// an unset wrapped number, and anything else.
std::optional<double> Number(const Json::Value& v);

// A non-negative whole number that fits in 64 bits.
std::optional<uint64_t> Whole(const Json::Value& v);

// A Unix time in seconds; 0 (not set) for null and for a number outside
// int64_t.
int64_t Time(const Json::Value& v);

// v[key], or null when v is not an object (jsoncpp throws on a lookup in
// a string or a number).
const Json::Value& Get(const Json::Value& v, const char* key);

std::string StringOr(const Json::Value& v, const std::string& fallback = "");

// A string, or the strings of an array (["RUNNING", "COMPLETING"]); empty
// for anything else. Non-string elements are skipped.
std::vector<std::string> Strings(const Json::Value& v);

// The "errors" of a Slurm JSON document, as one line ("" when none).
std::string Errors(const Json::Value& doc);

}  // namespace vgpu::slurm_json

#endif  // VGPU_TOOLS_SLURM_JSON_H_
