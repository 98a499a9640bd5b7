// AskVisionModel (vision_model.h).
#include "media/vision_model.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "media/image_codec.h"
#include "media/media_http.h"
#include "talaria/base/base64.h"
#include "talaria/base/strings.h"

namespace talaria::media {
namespace {

// True for an endpoint's refusal that says the image is too big.
bool SaysTooLarge(const JsonAnswer& a) {
  if (a.status == 413) return true;
  if (a.status != 400) return false;
  std::string text = ServiceError(a);
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text.find("too large") != std::string::npos || text.find("too big") != std::string::npos ||
         text.find("exceeds") != std::string::npos || text.find("size") != std::string::npos;
}

Result<JsonAnswer> AskOnce(const VisionSettings& s, const FittedImage& image,
                           const std::string& prompt, const std::stop_token& cancel,
                           std::chrono::steady_clock::time_point deadline) {
  const std::string data_url =
      "data:" + std::string(MimeType(image.format)) + ";base64," + Base64Encode(image.bytes);
  Json content = Json::array();
  content.push_back({{"type", "text"}, {"text", prompt}});
  content.push_back({{"type", "image_url"}, {"image_url", {{"url", data_url}}}});
  Json body = {{"model", s.model},
               {"messages", Json::array({{{"role", "user"}, {"content", content}}})},
               {"temperature", s.temperature},
               {"max_tokens", 2000}};
  net::HttpRequest req;
  req.method = "POST";
  req.url = s.base_url + "/chat/completions";
  if (!s.api_key.empty()) req.headers = {{"Authorization", "Bearer " + s.api_key}};
  req.body = DumpJson(body);
  req.total_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::max<std::chrono::steady_clock::duration>(deadline - std::chrono::steady_clock::now(),
                                                    std::chrono::seconds(1)));
  return SendJson("the vision model", std::move(req), cancel);
}

}  // namespace

Result<std::string> AskVisionModel(const VisionSettings& settings, std::string_view bytes,
                                   const std::string& prompt, const std::stop_token& cancel,
                                   std::chrono::steady_clock::time_point deadline) {
  auto dimension = static_cast<uint32_t>(settings.max_dimension);
  FittedImage image =
      TALARIA_TRY(FitImage(bytes, dimension, static_cast<size_t>(settings.max_image_bytes)));
  auto answer = AskOnce(settings, image, prompt, cancel, deadline);
  if (answer && SaysTooLarge(*answer)) {  // once more at half the size
    dimension = std::max<uint32_t>(64, std::max(image.width, image.height) / 2);
    auto smaller = FitImage(bytes, dimension, static_cast<size_t>(settings.max_image_bytes) / 2);
    if (smaller) {
      image = std::move(*smaller);
      answer = AskOnce(settings, image, prompt, cancel, deadline);
    }
  }
  if (!answer) return Err(answer.error());
  if (answer->status < 200 || answer->status > 299) {
    return Err(UnavailableError("the vision model answered HTTP " + std::to_string(answer->status) +
                                ": " + ServiceError(*answer)));
  }
  const Json& b = answer->body;
  std::string analysis;
  if (b.is_object() && b.contains("choices") && b["choices"].is_array() && !b["choices"].empty() &&
      b["choices"][0].is_object() && b["choices"][0].contains("message") &&
      b["choices"][0]["message"].is_object()) {
    analysis = JsonStringField(b["choices"][0]["message"], "content");
  }
  const size_t first = analysis.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    return Err(UnavailableError("the vision model answered with no text"));
  }
  return analysis.substr(first, analysis.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace talaria::media
