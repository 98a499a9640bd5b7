// What changed between two snapshots of one document, so an action can answer with the change
// instead of the whole page again. Lines are matched by their ref ("[ref=e5]", "[ref=f1e5]",
// "[frame=e7]"): a ref on both sides whose line differs is changed, one on a side only is added
// or removed; lines without a ref (text, structure) are matched by their content. Lines come
// out without their indentation, in the new snapshot's order (removed ones last), a ref-less
// line followed by the ref it comes after ("(after @e12)") so the model can place it.
//   + - button "Save" [ref=e14]       added
//   - - text: Loading...  (after @e3)  removed
//   ~ - textbox "Name" [ref=e3]: Bob   changed (its new line)
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace talaria::browser {

struct SnapshotDiff {
  std::string text;  // "" when nothing changed
  int added = 0, removed = 0, changed = 0;
};

SnapshotDiff DiffSnapshots(std::string_view before, std::string_view after);

}  // namespace talaria::browser
