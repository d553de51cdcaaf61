#include "engine/read/pickle_value.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <exception>
#include <new>
#include <system_error>
#include <utility>

namespace ff {

namespace {

// Opcode bytes, as CPython's Lib/pickle.py names them.
enum Op : unsigned char {
  MARK = '(',
  STOP = '.',
  POP = '0',
  POP_MARK = '1',
  DUP = '2',
  FLOAT = 'F',
  INT = 'I',
  BININT = 'J',
  BININT1 = 'K',
  LONG = 'L',
  BININT2 = 'M',
  NONE = 'N',
  PERSID = 'P',
  BINPERSID = 'Q',
  REDUCE = 'R',
  STRING = 'S',
  BINSTRING = 'T',
  SHORT_BINSTRING = 'U',
  UNICODE = 'V',
  BINUNICODE = 'X',
  APPEND = 'a',
  BUILD = 'b',
  GLOBAL = 'c',
  DICT = 'd',
  EMPTY_DICT = '}',
  APPENDS = 'e',
  GET = 'g',
  BINGET = 'h',
  INST = 'i',
  LONG_BINGET = 'j',
  LIST = 'l',
  EMPTY_LIST = ']',
  OBJ = 'o',
  PUT = 'p',
  BINPUT = 'q',
  LONG_BINPUT = 'r',
  SETITEM = 's',
  TUPLE = 't',
  EMPTY_TUPLE = ')',
  SETITEMS = 'u',
  BINFLOAT = 'G',
  PROTO = 0x80,
  NEWOBJ = 0x81,
  EXT1 = 0x82,
  EXT2 = 0x83,
  EXT4 = 0x84,
  TUPLE1 = 0x85,
  TUPLE2 = 0x86,
  TUPLE3 = 0x87,
  NEWTRUE = 0x88,
  NEWFALSE = 0x89,
  LONG1 = 0x8a,
  LONG4 = 0x8b,
  BINBYTES = 'B',
  SHORT_BINBYTES = 'C',
  SHORT_BINUNICODE = 0x8c,
  BINUNICODE8 = 0x8d,
  BINBYTES8 = 0x8e,
  EMPTY_SET = 0x8f,
  ADDITEMS = 0x90,
  FROZENSET = 0x91,
  NEWOBJ_EX = 0x92,
  STACK_GLOBAL = 0x93,
  MEMOIZE = 0x94,
  FRAME = 0x95,
  BYTEARRAY8 = 0x96,
  NEXT_BUFFER = 0x97,
  READONLY_BUFFER = 0x98,
};

const char* op_name(unsigned char op) {
  switch (op) {
    case PERSID:
      return "PERSID";
    case BINPERSID:
      return "BINPERSID";
    case REDUCE:
      return "REDUCE";
    case STRING:
      return "STRING";
    case BUILD:
      return "BUILD";
    case GLOBAL:
      return "GLOBAL";
    case INST:
      return "INST";
    case OBJ:
      return "OBJ";
    case NEWOBJ:
      return "NEWOBJ";
    case EXT1:
      return "EXT1";
    case EXT2:
      return "EXT2";
    case EXT4:
      return "EXT4";
    case EMPTY_SET:
      return "EMPTY_SET";
    case ADDITEMS:
      return "ADDITEMS";
    case FROZENSET:
      return "FROZENSET";
    case NEWOBJ_EX:
      return "NEWOBJ_EX";
    case STACK_GLOBAL:
      return "STACK_GLOBAL";
    case BYTEARRAY8:
      return "BYTEARRAY8";
    case NEXT_BUFFER:
      return "NEXT_BUFFER";
    case READONLY_BUFFER:
      return "READONLY_BUFFER";
    default:
      return "unknown";
  }
}

std::string hex_byte(unsigned char b) {
  static const char* digits = "0123456789abcdef";
  return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

constexpr PickleRef kMark = 0xfffffffeu;  // a MARK on the stack (never a value index)
// INT, LONG, FLOAT, PUT and GET carry short decimal text lines.
constexpr std::size_t kMaxNumberLine = 256;

// Python decodes pickled str with 'utf-8' and 'surrogatepass': well-formed
// UTF-8 whose three-byte forms may also encode surrogates.
bool valid_utf8(std::string_view s) {
  std::size_t i = 0, n = s.size();
  while (i < n) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    unsigned min;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2, min = 0x80, cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3, min = 0x800, cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4, min = 0x10000, cp = c & 0x07;
    } else {
      return false;
    }
    if (n - i < len) return false;
    for (std::size_t k = 1; k < len; ++k) {
      auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if (cp < min || cp > 0x10ffff) return false;
    i += len;
  }
  return true;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// Protocol 0's UNICODE line is 'raw-unicode-escape': every byte is a Latin-1
// character except \uXXXX and \UXXXXXXXX.
bool decode_raw_unicode_escape(std::string_view in, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    auto c = static_cast<unsigned char>(in[i]);
    if (c == '\\' && i + 1 < in.size() && (in[i + 1] == 'u' || in[i + 1] == 'U')) {
      std::size_t digits = in[i + 1] == 'u' ? 4 : 8;
      if (in.size() - i - 2 < digits) return false;
      std::uint32_t cp = 0;
      auto [p, ec] = std::from_chars(in.data() + i + 2, in.data() + i + 2 + digits, cp, 16);
      if (ec != std::errc() || p != in.data() + i + 2 + digits || cp > 0x10ffff) return false;
      append_utf8(out, cp);
      i += 1 + digits;
    } else {
      append_utf8(out, c);
    }
  }
  return true;
}

bool parse_int64(std::string_view text, std::int64_t& out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out, 10);
  return ec == std::errc() && p == text.data() + text.size() && !text.empty();
}

class Reader {
 public:
  Reader(std::string_view in, const PickleLimits& limits, PickleDocument& doc)
      : in_(in), limits_(limits), doc_(doc) {}

  void run() {
    if (in_.size() > limits_.max_input_bytes) {
      fail("input of " + std::to_string(in_.size()) + " bytes is larger than the " +
           std::to_string(limits_.max_input_bytes) + " bytes read");
      return;
    }
    // Most opcodes build one value; reserving for a typical density saves
    // the copies of a growing vector.
    doc_.values.reserve(std::min(in_.size() / 8 + 16, limits_.max_values));
    while (!done_ && !failed_ && !truncated_) {
      if (pos_ >= in_.size()) {
        truncate();
        break;
      }
      op_at_ = pos_;
      auto op = static_cast<unsigned char>(in_[pos_++]);
      step(op);
    }
    if (truncated_ && !failed_) close_open_containers();
  }

 private:
  // --- failure and truncation ---
  void fail(std::string why) {
    if (failed_) return;
    failed_ = true;
    doc_.error = std::move(why);
  }
  void fail_at(const std::string& what) { fail(what + " at byte " + std::to_string(op_at_)); }
  void truncate() {
    if (truncated_ || failed_) return;
    truncated_ = true;
    doc_.truncated = true;
    doc_.error =
        "the pickle ends at byte " + std::to_string(in_.size()) + " before its STOP opcode";
  }

  // --- input ---
  bool take(std::size_t n, std::string_view& out) {
    if (in_.size() - pos_ < n) {
      truncate();
      return false;
    }
    out = in_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool take_uint(std::size_t n, std::uint64_t& out) {
    std::string_view b;
    if (!take(n, b)) return false;
    out = 0;
    for (std::size_t i = n; i-- > 0;) out = (out << 8) | static_cast<unsigned char>(b[i]);
    return true;
  }
  bool take_line(std::size_t max, std::string_view& out) {
    std::size_t end = in_.find('\n', pos_);
    if (end == std::string_view::npos) {
      if (in_.size() - pos_ > max) {
        fail_at("a text argument longer than " + std::to_string(max) + " bytes");
      } else {
        truncate();
      }
      return false;
    }
    if (end - pos_ > max) {
      fail_at("a text argument longer than " + std::to_string(max) + " bytes");
      return false;
    }
    out = in_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }
  // A length field followed by that many bytes; the length is checked against
  // the limit before anything is read or allocated.
  bool take_sized(std::size_t width, std::string_view& out) {
    std::uint64_t len;
    if (!take_uint(width, len)) return false;
    if (len > limits_.max_string_bytes) {
      fail_at("a string or bytes length of " + std::to_string(len) + " (at most " +
              std::to_string(limits_.max_string_bytes) + ")");
      return false;
    }
    return take(static_cast<std::size_t>(len), out);
  }

  // --- values and stack ---
  PickleRef make(PickleKind kind) {
    if (doc_.values.size() >= limits_.max_values) {
      fail_at("more than " + std::to_string(limits_.max_values) + " values");
      return kNoPickleValue;
    }
    doc_.values.emplace_back();
    doc_.values.back().kind = kind;
    return static_cast<PickleRef>(doc_.values.size() - 1);
  }
  void push(PickleRef ref) {
    if (ref == kNoPickleValue) return;
    if (stack_.size() >= limits_.max_stack) {
      fail_at("a stack deeper than " + std::to_string(limits_.max_stack));
      return;
    }
    stack_.push_back(ref);
  }
  void push_new(PickleKind kind) { push(make(kind)); }
  void push_int(std::int64_t v) {
    PickleRef r = make(PickleKind::kInt);
    if (r != kNoPickleValue) doc_.values[r].integer = v;
    push(r);
  }
  void push_text(PickleKind kind, std::string_view text) {
    PickleRef r = make(kind);
    if (r != kNoPickleValue) doc_.values[r].text.assign(text);
    push(r);
  }
  std::size_t frame_start() const { return marks_.empty() ? 0 : marks_.back() + 1; }
  // The value on top of the stack, which must lie above the innermost MARK.
  bool pop(PickleRef& out) {
    if (stack_.size() <= frame_start()) {
      fail_at("stack underflow");
      return false;
    }
    out = stack_.back();
    stack_.pop_back();
    return true;
  }
  bool top(PickleRef& out) {
    if (stack_.size() <= frame_start()) {
      fail_at("stack underflow");
      return false;
    }
    out = stack_.back();
    return true;
  }
  // The values above the innermost MARK, which is removed with them.
  bool pop_mark(std::vector<PickleRef>& out) {
    if (marks_.empty()) {
      fail_at("no MARK to close");
      return false;
    }
    std::size_t m = marks_.back();
    marks_.pop_back();
    out.assign(stack_.begin() + static_cast<std::ptrdiff_t>(m) + 1, stack_.end());
    stack_.resize(m);
    return true;
  }
  bool add_items(PickleRef container, const PickleRef* items, std::size_t n) {
    if (n > limits_.max_items - items_) {
      fail_at("more than " + std::to_string(limits_.max_items) + " container elements");
      return false;
    }
    items_ += n;
    auto& dst = doc_.values[container].items;
    dst.insert(dst.end(), items, items + n);
    return true;
  }
  bool expect_kind(PickleRef ref, PickleKind kind, const char* op) {
    if (doc_.values[ref].kind != kind) {
      fail_at(std::string(op) + " on a " + pickle_kind_name(doc_.values[ref].kind));
      return false;
    }
    return true;
  }
  // Python numbers memo slots 0, 1, 2, ... (MEMOIZE is len(memo)), so the
  // memo is a vector; a slot index beyond the limit is refused, which also
  // bounds its size.
  void memo_put(std::uint64_t index) {
    PickleRef v;
    if (!top(v)) return;
    if (index >= limits_.max_memo) {
      fail_at("memo index " + std::to_string(index) + " (at most " +
              std::to_string(limits_.max_memo) + " memo entries)");
      return;
    }
    if (index >= memo_.size()) {
      memo_.resize(static_cast<std::size_t>(index) + 1, kNoPickleValue);
    }
    if (memo_[index] == kNoPickleValue) ++memo_used_;
    memo_[index] = v;
  }
  void memo_get(std::uint64_t index) {
    if (index >= memo_.size() || memo_[index] == kNoPickleValue) {
      fail_at("memo slot " + std::to_string(index) + " read before it was written");
      return;
    }
    push(memo_[index]);
  }
  void build_tuple(std::vector<PickleRef>& items) {
    PickleRef t = make(PickleKind::kTuple);
    if (t == kNoPickleValue || !add_items(t, items.data(), items.size())) return;
    push(t);
  }

  // --- one opcode ---
  void step(unsigned char op) {
    std::string_view arg;
    std::uint64_t u = 0;
    switch (op) {
      case PROTO:
        if (take_uint(1, u) && u > 5) fail_at("pickle protocol " + std::to_string(u));
        return;
      case FRAME:  // a framing hint only; a frame cut short is a truncated input
        take_uint(8, u);
        return;
      case STOP: {
        PickleRef v;
        if (!pop(v)) return;
        doc_.root = v;
        doc_.ok = true;
        done_ = true;
        return;
      }
      case MARK:
        if (marks_.size() >= limits_.max_depth) {
          fail_at("containers nested deeper than " + std::to_string(limits_.max_depth));
          return;
        }
        if (stack_.size() >= limits_.max_stack) {
          fail_at("a stack deeper than " + std::to_string(limits_.max_stack));
          return;
        }
        marks_.push_back(stack_.size());
        stack_.push_back(kMark);
        return;
      case POP: {
        if (stack_.size() > frame_start()) {
          stack_.pop_back();
        } else {
          std::vector<PickleRef> discard;
          pop_mark(discard);
        }
        return;
      }
      case POP_MARK: {
        std::vector<PickleRef> discard;
        pop_mark(discard);
        return;
      }
      case DUP: {
        PickleRef v;
        if (top(v)) push(v);
        return;
      }
      case NONE:
        push_new(PickleKind::kNone);
        return;
      case NEWTRUE:
      case NEWFALSE: {
        PickleRef r = make(PickleKind::kBool);
        if (r != kNoPickleValue) doc_.values[r].boolean = op == NEWTRUE;
        push(r);
        return;
      }
      case BININT:
        if (take_uint(4, u)) push_int(static_cast<std::int32_t>(static_cast<std::uint32_t>(u)));
        return;
      case BININT1:
        if (take_uint(1, u)) push_int(static_cast<std::int64_t>(u));
        return;
      case BININT2:
        if (take_uint(2, u)) push_int(static_cast<std::int64_t>(u));
        return;
      case LONG1:
        if (take_uint(1, u)) long_bytes(u);
        return;
      case LONG4:
        if (take_uint(4, u)) {
          if (u & 0x80000000u) {
            fail_at("LONG4 with a negative length");
            return;
          }
          long_bytes(u);
        }
        return;
      case INT: {
        if (!take_line(kMaxNumberLine, arg)) return;
        // Protocol 0 writes True and False as INT "01" and "00".
        if (arg == "01" || arg == "00") {
          PickleRef r = make(PickleKind::kBool);
          if (r != kNoPickleValue) doc_.values[r].boolean = arg == "01";
          push(r);
          return;
        }
        std::int64_t v;
        if (!parse_int64(arg, v)) {
          fail_at("INT \"" + std::string(arg) + "\" is not a 64-bit integer");
          return;
        }
        push_int(v);
        return;
      }
      case LONG: {
        if (!take_line(kMaxNumberLine, arg)) return;
        if (!arg.empty() && arg.back() == 'L') arg.remove_suffix(1);
        std::int64_t v;
        if (!parse_int64(arg, v)) {
          fail_at("LONG \"" + std::string(arg) + "\" is not a 64-bit integer");
          return;
        }
        push_int(v);
        return;
      }
      case FLOAT: {
        if (!take_line(kMaxNumberLine, arg)) return;
        double d = 0;
        auto [p, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), d);
        if (ec != std::errc() || p != arg.data() + arg.size()) {
          fail_at("FLOAT \"" + std::string(arg) + "\" is not a number");
          return;
        }
        push_float(d);
        return;
      }
      case BINFLOAT: {
        if (!take(8, arg)) return;
        std::uint64_t bits = 0;
        for (char c : arg) bits = (bits << 8) | static_cast<unsigned char>(c);  // big-endian
        double d;
        std::memcpy(&d, &bits, sizeof d);
        push_float(d);
        return;
      }
      case BINUNICODE:
        unicode(4);
        return;
      case SHORT_BINUNICODE:
        unicode(1);
        return;
      case BINUNICODE8:
        unicode(8);
        return;
      case BINSTRING:
        unicode(4);
        return;  // Python 2 str: Python 3 reads it as str too
      case SHORT_BINSTRING:
        unicode(1);
        return;
      case UNICODE: {
        if (!take_line(limits_.max_string_bytes, arg)) return;
        std::string s;
        if (!decode_raw_unicode_escape(arg, s)) {
          fail_at("UNICODE with a malformed escape");
          return;
        }
        push_text(PickleKind::kStr, s);
        return;
      }
      case BINBYTES:
        if (take_sized(4, arg)) push_text(PickleKind::kBytes, arg);
        return;
      case SHORT_BINBYTES:
        if (take_sized(1, arg)) push_text(PickleKind::kBytes, arg);
        return;
      case BINBYTES8:
        if (take_sized(8, arg)) push_text(PickleKind::kBytes, arg);
        return;
      case EMPTY_LIST:
        push_new(PickleKind::kList);
        return;
      case EMPTY_DICT:
        push_new(PickleKind::kDict);
        return;
      case EMPTY_TUPLE:
        push_new(PickleKind::kTuple);
        return;
      case TUPLE1:
      case TUPLE2:
      case TUPLE3: {
        std::size_t n = op - TUPLE1 + 1;
        if (stack_.size() < frame_start() + n) {
          fail_at("stack underflow");
          return;
        }
        std::vector<PickleRef> items(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
        stack_.resize(stack_.size() - n);
        build_tuple(items);
        return;
      }
      case TUPLE: {
        std::vector<PickleRef> items;
        if (pop_mark(items)) build_tuple(items);
        return;
      }
      case LIST:
      case DICT: {
        std::vector<PickleRef> items;
        if (!pop_mark(items)) return;
        if (op == DICT && items.size() % 2 != 0) {
          fail_at("DICT with an odd number of keys and values");
          return;
        }
        PickleRef c = make(op == LIST ? PickleKind::kList : PickleKind::kDict);
        if (c != kNoPickleValue && add_items(c, items.data(), items.size())) push(c);
        return;
      }
      case APPEND: {
        PickleRef v, list;
        if (!pop(v) || !top(list) || !expect_kind(list, PickleKind::kList, "APPEND")) return;
        add_items(list, &v, 1);
        return;
      }
      case APPENDS: {
        std::vector<PickleRef> items;
        PickleRef list;
        if (!pop_mark(items) || !top(list) || !expect_kind(list, PickleKind::kList, "APPENDS")) {
          return;
        }
        add_items(list, items.data(), items.size());
        return;
      }
      case SETITEM: {
        PickleRef kv[2], dict;
        if (!pop(kv[1]) || !pop(kv[0]) || !top(dict) ||
            !expect_kind(dict, PickleKind::kDict, "SETITEM")) {
          return;
        }
        add_items(dict, kv, 2);
        return;
      }
      case SETITEMS: {
        std::vector<PickleRef> items;
        PickleRef dict;
        if (!pop_mark(items) || !top(dict) || !expect_kind(dict, PickleKind::kDict, "SETITEMS")) {
          return;
        }
        if (items.size() % 2 != 0) {
          fail_at("SETITEMS with an odd number of keys and values");
          return;
        }
        add_items(dict, items.data(), items.size());
        return;
      }
      case BINPUT:
        if (take_uint(1, u)) memo_put(u);
        return;
      case LONG_BINPUT:
        if (take_uint(4, u)) memo_put(u);
        return;
      case MEMOIZE:
        memo_put(memo_used_);
        return;
      case PUT:
      case GET: {
        if (!take_line(kMaxNumberLine, arg)) return;
        std::uint64_t index = 0;
        auto [p, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), index, 10);
        if (ec != std::errc() || p != arg.data() + arg.size() || arg.empty()) {
          fail_at(std::string(op == PUT ? "PUT" : "GET") + " index \"" + std::string(arg) +
                  "\" is not a number");
          return;
        }
        if (op == PUT) {
          memo_put(index);
        } else {
          memo_get(index);
        }
        return;
      }
      case BINGET:
        if (take_uint(1, u)) memo_get(u);
        return;
      case LONG_BINGET:
        if (take_uint(4, u)) memo_get(u);
        return;
      default:
        fail_at("opcode " + hex_byte(op) + " (" + op_name(op) + ") not allowed");
        return;
    }
  }

  void push_float(double d) {
    PickleRef r = make(PickleKind::kFloat);
    if (r != kNoPickleValue) doc_.values[r].real = d;
    push(r);
  }

  void unicode(std::size_t width) {
    std::string_view s;
    if (!take_sized(width, s)) return;
    if (!valid_utf8(s)) {
      fail_at("a str that is not UTF-8");
      return;
    }
    push_text(PickleKind::kStr, s);
  }

  // LONG1/LONG4: little-endian two's complement; more than 8 bytes is fine
  // only when the extra ones are sign extension.
  void long_bytes(std::uint64_t n) {
    if (n > 4096) {
      fail_at("an integer of " + std::to_string(n) + " bytes");
      return;
    }
    std::string_view b;
    if (!take(static_cast<std::size_t>(n), b)) return;
    if (n == 0) {
      push_int(0);
      return;
    }
    bool negative = static_cast<unsigned char>(b[n - 1]) & 0x80;
    unsigned char fill = negative ? 0xff : 0x00;
    for (std::size_t i = 8; i < n; ++i) {
      if (static_cast<unsigned char>(b[i]) != fill) {
        fail_at("an integer beyond 64 bits");
        return;
      }
    }
    std::size_t k = n < 8 ? static_cast<std::size_t>(n) : 8;
    std::uint64_t v = negative ? ~std::uint64_t{0} : 0;
    for (std::size_t i = k; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[i]);
    if (n >= 8 && (((v >> 63) != 0) != negative)) {  // the sign bit is not where Python put it
      fail_at("an integer beyond 64 bits");
      return;
    }
    push_int(static_cast<std::int64_t>(v));
  }

  // The input ended: close every open MARK with what it holds. The value
  // below a MARK is the container being filled (a list gets the values, a
  // dict the complete key/value pairs); otherwise the MARK opened a TUPLE,
  // LIST or DICT whose opcode never came, kept as a tuple. Every container
  // that still expected values is `partial`; so is the value on top of the
  // stack (it may be a container whose first item never came), and so may a
  // container that was complete but not yet given to its parent: losing one
  // whole entry at the cut is the price of never keeping a partial one.
  void close_open_containers() {
    if (!stack_.empty() && stack_.back() != kMark) mark_partial(stack_.back());
    std::vector<PickleRef> items;
    while (!marks_.empty() && !failed_) {
      std::size_t m = marks_.back();
      marks_.pop_back();
      items.assign(stack_.begin() + static_cast<std::ptrdiff_t>(m) + 1, stack_.end());
      stack_.resize(m);
      PickleRef below = stack_.size() > frame_start() ? stack_.back() : kNoPickleValue;
      PickleKind kind = below != kNoPickleValue ? doc_.values[below].kind : PickleKind::kNone;
      if (kind == PickleKind::kList) {
        add_items(below, items.data(), items.size());
        mark_partial(below);
      } else if (kind == PickleKind::kDict) {
        add_items(below, items.data(), items.size() - items.size() % 2);
        mark_partial(below);
      } else {
        PickleRef t = make(PickleKind::kTuple);
        if (t == kNoPickleValue || !add_items(t, items.data(), items.size())) return;
        doc_.values[t].partial = true;
        stack_.push_back(t);
      }
    }
    // Outside every MARK, protocol 0 (and protocol 1+ for a one-element list
    // or dict) fills a container with APPEND and SETITEM, one value at a
    // time: what is still on the stack are containers being built and the
    // values waiting for them. Fold them down: a dict takes a key and a
    // value, a list a value, a key whose value never came is dropped.
    if (failed_) return;  // a MARK may still be on the stack
    for (PickleRef r : stack_) mark_partial(r);
    while (!failed_ && stack_.size() > 1) {
      std::size_t n = stack_.size();
      PickleRef v = stack_[n - 1];
      if (n >= 3 && doc_.values[stack_[n - 3]].kind == PickleKind::kDict) {
        PickleRef kv[2] = {stack_[n - 2], v};
        add_items(stack_[n - 3], kv, 2);
        stack_.resize(n - 2);
      } else if (doc_.values[stack_[n - 2]].kind == PickleKind::kList) {
        add_items(stack_[n - 2], &v, 1);
        stack_.pop_back();
      } else {
        stack_.pop_back();
      }
    }
    if (!failed_ && !stack_.empty()) doc_.root = stack_.front();
  }
  void mark_partial(PickleRef ref) {
    PickleValue& v = doc_.values[ref];
    if (v.kind == PickleKind::kList || v.kind == PickleKind::kDict ||
        v.kind == PickleKind::kTuple) {
      v.partial = true;
    }
  }

  std::string_view in_;
  const PickleLimits& limits_;
  PickleDocument& doc_;
  std::size_t pos_ = 0, op_at_ = 0, items_ = 0;
  bool done_ = false, failed_ = false, truncated_ = false;
  std::vector<PickleRef> stack_;
  std::vector<std::size_t> marks_;  // stack positions of the open MARKs
  std::vector<PickleRef> memo_;
  std::size_t memo_used_ = 0;
};

}  // namespace

const char* pickle_kind_name(PickleKind kind) {
  switch (kind) {
    case PickleKind::kNone:
      return "None";
    case PickleKind::kBool:
      return "bool";
    case PickleKind::kInt:
      return "int";
    case PickleKind::kFloat:
      return "float";
    case PickleKind::kStr:
      return "str";
    case PickleKind::kBytes:
      return "bytes";
    case PickleKind::kList:
      return "list";
    case PickleKind::kTuple:
      return "tuple";
    case PickleKind::kDict:
      return "dict";
  }
  return "?";
}

const PickleValue* PickleDocument::find(const PickleValue& dict, std::string_view key) const {
  if (dict.kind != PickleKind::kDict) return nullptr;
  for (std::size_t i = dict.items.size() / 2; i-- > 0;) {
    const PickleValue* k = get(dict.items[2 * i]);
    if (k != nullptr && k->kind == PickleKind::kStr && k->text == key) {
      return get(dict.items[2 * i + 1]);
    }
  }
  return nullptr;
}

PickleDocument read_pickle(std::string_view bytes, const PickleLimits& limits) {
  PickleDocument doc;
  try {
    Reader(bytes, limits, doc).run();
  } catch (const std::bad_alloc&) {
    doc = PickleDocument();
    doc.error = "out of memory reading the pickle";
  } catch (const std::exception& e) {
    doc = PickleDocument();
    doc.error = std::string("pickle not read: ") + e.what();
  }
  if (!doc.ok && !doc.truncated) doc.root = kNoPickleValue;
  return doc;
}

}  // namespace ff
