// ParseKey (key_codes.h).
#include "browser/key_codes.h"

#include <array>
#include <cctype>

namespace talaria::browser {
namespace {

struct Named {
  std::string_view name, key, code;
  int key_code;
  std::string_view text;
};

constexpr std::array<Named, 18> kNamed = {{
    {"enter", "Enter", "Enter", 13, "\r"},
    {"return", "Enter", "Enter", 13, "\r"},
    {"tab", "Tab", "Tab", 9, ""},
    {"escape", "Escape", "Escape", 27, ""},
    {"esc", "Escape", "Escape", 27, ""},
    {"backspace", "Backspace", "Backspace", 8, ""},
    {"delete", "Delete", "Delete", 46, ""},
    {"space", " ", "Space", 32, " "},
    {"arrowup", "ArrowUp", "ArrowUp", 38, ""},
    {"arrowdown", "ArrowDown", "ArrowDown", 40, ""},
    {"arrowleft", "ArrowLeft", "ArrowLeft", 37, ""},
    {"arrowright", "ArrowRight", "ArrowRight", 39, ""},
    {"home", "Home", "Home", 36, ""},
    {"end", "End", "End", 35, ""},
    {"pageup", "PageUp", "PageUp", 33, ""},
    {"pagedown", "PageDown", "PageDown", 34, ""},
    {"insert", "Insert", "Insert", 45, ""},
    {"f5", "F5", "F5", 116, ""},
}};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Result<KeyStroke> ParseKey(std::string_view name) {
  KeyStroke k;
  // "Control+Shift+a": modifiers, then the key. A lone "+" is the plus key.
  while (name.size() > 1) {
    const size_t plus = name.find('+', 1);
    if (plus == std::string_view::npos) break;
    const std::string mod = Lower(name.substr(0, plus));
    if (mod == "alt") {
      k.modifiers |= 1;
    } else if (mod == "control" || mod == "ctrl") {
      k.modifiers |= 2;
    } else if (mod == "meta" || mod == "cmd" || mod == "command") {
      k.modifiers |= 4;
    } else if (mod == "shift") {
      k.modifiers |= 8;
    } else {
      return Err(InvalidArgumentError("unknown modifier: " + std::string(name.substr(0, plus))));
    }
    name.remove_prefix(plus + 1);
  }
  if (name.empty()) return Err(InvalidArgumentError("key must not be empty"));
  const std::string lower = Lower(name);
  for (const Named& n : kNamed) {
    if (lower == n.name) {
      k.key = n.key;
      k.code = n.code;
      k.key_code = n.key_code;
      if ((k.modifiers & 7) == 0) k.text = n.text;
      return k;
    }
  }
  if (name.size() == 1 && name[0] >= 0x20 && name[0] < 0x7f) {
    const char c = name[0];
    k.key = std::string(1, c);
    if (std::isalpha(static_cast<unsigned char>(c)) != 0) {
      const char up = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      k.code = std::string("Key") + up;
      k.key_code = static_cast<unsigned char>(up);
    } else if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      k.code = std::string("Digit") + c;
      k.key_code = static_cast<unsigned char>(c);
    } else {
      k.key_code = 0;
    }
    if ((k.modifiers & 7) == 0) k.text = k.key;
    return k;
  }
  return Err(InvalidArgumentError("unknown key: " + std::string(name) +
                                  " (use Enter, Tab, Escape, Backspace, Delete, Space, ArrowUp, "
                                  "ArrowDown, ArrowLeft, ArrowRight, Home, End, PageUp, PageDown, "
                                  "a single character, or Control+<key>)"));
}

}  // namespace talaria::browser
