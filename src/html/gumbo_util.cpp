#include "html/gumbo_util.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "html/text_runs.h"
#include "talaria/base/ascii.h"

namespace talaria::html {

namespace {

// Every block starts with a header that keeps the payload 16-byte aligned and says whether
// the block is large (malloc'd, linked) or small (in a chunk).
constexpr size_t kHeader = 32;
constexpr size_t kLargeFrom = 1024;
constexpr size_t kChunkBytes = size_t{64} * 1024;

}  // namespace

struct GumboArena::LargeBlock {
  size_t large;  // 1; 0 in a small block's header
  LargeBlock* prev;
  LargeBlock* next;
};
static_assert(sizeof(void*) * 3 <= kHeader);

GumboArena::~GumboArena() {
  while (large_ != nullptr) {
    LargeBlock* next = large_->next;
    std::free(large_);
    large_ = next;
  }
}

void* GumboArena::Allocate(void* arena, size_t size) {
  auto* self = static_cast<GumboArena*>(arena);
  return size >= kLargeFrom ? self->AllocateLarge(size) : self->AllocateSmall(size);
}

void GumboArena::Deallocate(void* arena, void* block) {
  if (block == nullptr) return;
  auto* header = reinterpret_cast<LargeBlock*>(static_cast<unsigned char*>(block) - kHeader);
  if (header->large == 0) return;  // a small block: freed with its chunk
  auto* self = static_cast<GumboArena*>(arena);
  if (header->prev != nullptr) header->prev->next = header->next;
  if (header->next != nullptr) header->next->prev = header->prev;
  if (self->large_ == header) self->large_ = header->next;
  std::free(header);
}

void* GumboArena::AllocateSmall(size_t size) {
  const size_t need = kHeader + ((size + 15) & ~size_t{15});
  if (need > left_) {
    chunks_.push_back(std::make_unique_for_overwrite<unsigned char[]>(kChunkBytes));
    next_ = chunks_.back().get();
    left_ = kChunkBytes;
  }
  unsigned char* block = next_;
  next_ += need;
  left_ -= need;
  reinterpret_cast<LargeBlock*>(block)->large = 0;
  return block + kHeader;
}

void* GumboArena::AllocateLarge(size_t size) {
  auto* header = static_cast<LargeBlock*>(std::malloc(kHeader + size));
  if (header == nullptr) std::abort();  // as libgumbo's own allocator: it cannot fail softly
  header->large = 1;
  header->prev = nullptr;
  header->next = large_;
  if (large_ != nullptr) large_->prev = header;
  large_ = header;
  return reinterpret_cast<unsigned char*>(header) + kHeader;
}

GumboOutput* ParsedHtml::Parse(std::string_view html) {
  GumboOptions options = kGumboDefaultOptions;
  options.allocator = &GumboArena::Allocate;
  options.deallocator = &GumboArena::Deallocate;
  options.userdata = &arena_;
  // Errors are only recorded, never acted on: recording them costs time and memory on the
  // broken markup hostile pages are made of.
  options.max_errors = 0;
  return gumbo_parse_with_options(&options, html.data(), html.size());
}

ParsedHtml::ParsedHtml(std::string_view html) {
  MarkedHtml marked = MarkTextRuns(html);
  if (!marked.html.empty()) {
    // The tree points into the text it was parsed from: keep it, at its final address.
    marked_input_ = std::move(marked.html);
    output_ = Parse(marked_input_);
    if (marked.runs.empty() || RestoreTextRuns(output_->root, marked.runs, arena_)) return;
    // A marker did not come back as text (see text_runs.h): parse what was written, with its
    // repeated attributes left out all the same. The first tree stays in the arena until this
    // object goes.
    if (marked.dropped != 0) {
      MarkedHtml deduplicated = DropRepeatedAttributes(html);
      if (!deduplicated.runs.empty()) {
        plain_input_ = std::move(deduplicated.html);
        output_ = Parse(plain_input_);
        if (RestoreTextRuns(output_->root, deduplicated.runs, arena_)) return;
      }
    }
  }
  output_ = Parse(html);
}

namespace {

// gumbo_get_attribute compares every attribute with strcasecmp, several times per element.
// The tokenizer has already lowered attribute names (foreign content's camelCase adjustments
// touch none of the lower-case names asked for here), so a byte compare finds the same one.
const GumboAttribute* FindAttribute(const GumboNode* node, const char* name) {
  if (!IsElement(node)) return nullptr;
  const GumboVector& attributes = node->v.element.attributes;
  for (unsigned i = 0; i < attributes.length; ++i) {
    const auto* attribute = static_cast<const GumboAttribute*>(attributes.data[i]);
    if (attribute->name[0] == name[0] && std::strcmp(attribute->name, name) == 0) return attribute;
  }
  return nullptr;
}

}  // namespace

std::string_view AttributeOf(const GumboNode* node, const char* name) {
  const GumboAttribute* attribute = FindAttribute(node, name);
  return attribute == nullptr ? std::string_view() : std::string_view(attribute->value);
}

bool HasAttribute(const GumboNode* node, const char* name) {
  return FindAttribute(node, name) != nullptr;
}

bool IsBlockTag(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_ADDRESS:
    case GUMBO_TAG_ARTICLE:
    case GUMBO_TAG_ASIDE:
    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_BODY:
    case GUMBO_TAG_CENTER:
    case GUMBO_TAG_DD:
    case GUMBO_TAG_DETAILS:
    case GUMBO_TAG_DIR:
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_DL:
    case GUMBO_TAG_DT:
    case GUMBO_TAG_FIELDSET:
    case GUMBO_TAG_FIGCAPTION:
    case GUMBO_TAG_FIGURE:
    case GUMBO_TAG_FOOTER:
    case GUMBO_TAG_FORM:
    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
    case GUMBO_TAG_HEADER:
    case GUMBO_TAG_HGROUP:
    case GUMBO_TAG_HR:
    case GUMBO_TAG_HTML:
    case GUMBO_TAG_LI:
    case GUMBO_TAG_MAIN:
    case GUMBO_TAG_MENU:
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_P:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_SECTION:
    case GUMBO_TAG_SUMMARY:
    case GUMBO_TAG_TABLE:
    case GUMBO_TAG_TBODY:
    case GUMBO_TAG_TD:
    case GUMBO_TAG_TFOOT:
    case GUMBO_TAG_TH:
    case GUMBO_TAG_THEAD:
    case GUMBO_TAG_TR:
    case GUMBO_TAG_UL:
    case GUMBO_TAG_CAPTION:
    case GUMBO_TAG_LISTING:
    case GUMBO_TAG_XMP:
    case GUMBO_TAG_PLAINTEXT:
      return true;
    default:
      return false;
  }
}

bool IsUnknownTagNamed(const GumboNode* node, std::string_view name) {
  if (TagOf(node) != GUMBO_TAG_UNKNOWN) return false;
  GumboStringPiece piece = node->v.element.original_tag;
  if (piece.data == nullptr || piece.length == 0) return false;
  gumbo_tag_from_original_text(&piece);
  return EqualsIgnoringAsciiCase(std::string_view(piece.data, piece.length), name);
}

std::string ClassAndId(const GumboNode* node, size_t limit) {
  std::string out(AttributeOf(node, "class").substr(0, limit));
  const std::string_view id = AttributeOf(node, "id");
  if (!id.empty()) {
    out += ' ';
    out += id.substr(0, limit);
  }
  for (char& c : out) c = AsciiLower(c);
  return out;
}

}  // namespace talaria::html
