// What Input.dispatchKeyEvent needs for a key the model names ("Enter", "Tab", "ArrowDown",
// "a", "Control+a"): the DOM key and code, the Windows virtual key code Chromium's editing
// commands listen to, the text a printable key inserts, and the modifier bits.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria::browser {

struct KeyStroke {
  std::string key;    // DOM KeyboardEvent.key
  std::string code;   // DOM KeyboardEvent.code
  int key_code = 0;   // windowsVirtualKeyCode
  std::string text;   // what keyDown inserts ("" for non-printing keys)
  int modifiers = 0;  // Alt 1, Control 2, Meta 4, Shift 8
};

// InvalidArgument for a name it does not know.
Result<KeyStroke> ParseKey(std::string_view name);

}  // namespace talaria::browser
