// A bounded, non-executing reader of Python pickle bytes (protocols 0-5) into
// plain data: None, bool, int64, float, str, bytes, list, tuple, dict.
//
// Why not a library: Debian ships no C or C++ pickle reader except libtorch's
// (libtorch-dev), whose Unpickler resolves GLOBAL through type resolvers (it is
// built to restore TorchScript objects) and would bring hundreds of megabytes
// into the engine. This reader knows only the opcodes that build plain data;
// any other one (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ*,
// PERSID, EXT*, sets, out-of-band buffers) stops the read with an error naming
// the opcode and its byte offset. Nothing is ever imported, called or built
// from a class name. Opcode meanings: CPython's Lib/pickletools.py
// (https://github.com/python/cpython/blob/main/Lib/pickletools.py).
//
// The result is a graph, not a tree: the memo (PUT/GET) makes two places refer
// to one value, as Python does, and can even make a list contain itself. Walk
// it along the paths you expect, with bounds; never recurse over it blindly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ff {

enum class PickleKind : std::uint8_t {
  kNone,
  kBool,
  kInt,
  kFloat,
  kStr,
  kBytes,
  kList,
  kTuple,
  kDict
};

const char* pickle_kind_name(PickleKind kind);  // "None", "bool", "int", ... as Python names them

using PickleRef = std::uint32_t;
constexpr PickleRef kNoPickleValue = 0xffffffffu;

struct PickleValue {
  PickleKind kind = PickleKind::kNone;
  // A container still open when the input ended (its closing opcode never
  // came): what it holds was read, but more may have followed.
  bool partial = false;
  bool boolean = false;
  std::int64_t integer = 0;
  double real = 0;
  std::string text;              // str (UTF-8) or bytes
  std::vector<PickleRef> items;  // list, tuple: the elements; dict: key, value, key, value, ...
};

struct PickleLimits {
  // The caller bounds what it reads too; this is the reader's own stop for a
  // caller that does not (a flight-recorder dump of 100,000 entries is about
  // 40 MB).
  std::size_t max_input_bytes = 64u << 20;
  // Values built (every opcode that pushes a new one). 20,000 entries of a
  // PyTorch dump build about 600,000; at roughly 80 bytes a value this caps
  // the graph near 320 MB.
  std::size_t max_values = 4'000'000;
  // Elements put into containers, all together (dict keys and values count).
  std::size_t max_items = 16'000'000;
  // Memo slots: PyTorch's pickler memoizes each distinct string once.
  std::size_t max_memo = 1'000'000;
  // The working stack, including MARKs: PyTorch appends every entry of a dump
  // in one APPENDS, so the stack holds a whole entries list.
  std::size_t max_stack = 4'000'000;
  // Open MARKs at once: the nesting depth of the containers being built. A
  // flight-recorder dump nests 5 deep.
  std::size_t max_depth = 256;
  // One str or bytes value (a stack trace string is a few kilobytes).
  std::size_t max_string_bytes = 16u << 20;
};

struct PickleDocument {
  std::vector<PickleValue> values;
  PickleRef root = kNoPickleValue;  // the value STOP returned (or the outermost one, truncated)
  bool ok = false;                  // STOP reached with exactly one value
  // The input ended before STOP (a dump cut short): `root` is the outermost
  // value that was being built, its open containers closed with what they had
  // (each marked `partial`).
  bool truncated = false;
  std::string error;  // why not ok (also set when truncated)

  const PickleValue* get(PickleRef ref) const {
    return ref < values.size() ? &values[ref] : nullptr;
  }
  const PickleValue* root_value() const { return get(root); }
  // The value of `key` (a str key) in `dict`, the last one when a key
  // repeats (as Python's dict keeps it); null when absent or not a dict.
  const PickleValue* find(const PickleValue& dict, std::string_view key) const;
};

// Never throws (allocation failure included: it becomes `error`).
PickleDocument read_pickle(std::string_view bytes, const PickleLimits& limits = {});

}  // namespace ff
