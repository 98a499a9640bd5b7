// The MCP conformance suite's fixtures (@modelcontextprotocol/conformance, server scenarios) as
// a talaria plugin: the tools, resources and prompts its scenarios call by fixed names, in the
// toolset "conformance". Test-only: built with the tests, loaded by
// `talaria mcp --plugins DIR --toolsets conformance`, never installed or in a default toolset.
// It goes through the real plugin ABI (plugin.h), so the suite also covers the plugin path.
#include <talaria/plugin.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

TALARIA_PLUGIN_DEFINE_VERSION();

namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kToolset = "conformance";
// A 1x1 PNG and a WAV file with no samples: the smallest valid media.
constexpr const char* kPng =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg"
    "==";
constexpr const char* kWav = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

int SetText(const talaria_call* call, const std::string& text) {
  call->set_result(call->context, text.data(), text.size());
  return TALARIA_PLUGIN_OK;
}

// Sets rich content plus a text rendering for the model.
int SetContent(const talaria_call* call, const Json& blocks, const std::string& text) {
  if (!TALARIA_CALL_HAS(call, set_content)) return SetText(call, text);
  const std::string json = blocks.dump();
  call->set_content(call->context, json.data(), json.size());
  return SetText(call, text);
}

int SetJson(const talaria_call* call, const Json& value) { return SetText(call, value.dump()); }

Json TextBlock(const std::string& text) { return Json{{"type", "text"}, {"text", text}}; }
Json ImageBlock() { return Json{{"type", "image"}, {"data", kPng}, {"mimeType", "image/png"}}; }
Json ResourceBlock(const std::string& uri, const std::string& mime, const std::string& text) {
  return Json{{"type", "resource"},
              {"resource", {{"uri", uri}, {"mimeType", mime}, {"text", text}}}};
}

Json Args(const char* text, size_t length) {
  Json args = Json::parse(std::string(text, length), nullptr, false);
  return args.is_object() ? args : Json::object();
}

void Sleep(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// ---- tools ----

int SimpleText(void*, const char*, size_t, const talaria_call* call) {
  return SetText(call, "This is a simple text response for testing.");
}

int ImageContent(void*, const char*, size_t, const talaria_call* call) {
  return SetContent(call, Json::array({ImageBlock()}), "[image/png, 1x1]");
}

int AudioContent(void*, const char*, size_t, const talaria_call* call) {
  return SetContent(
      call, Json::array({Json{{"type", "audio"}, {"data", kWav}, {"mimeType", "audio/wav"}}}),
      "[audio/wav, empty]");
}

int EmbeddedResource(void*, const char*, size_t, const talaria_call* call) {
  return SetContent(call,
                    Json::array({ResourceBlock("test://embedded-resource", "text/plain",
                                               "This is an embedded resource content.")}),
                    "This is an embedded resource content.");
}

int MixedContent(void*, const char*, size_t, const talaria_call* call) {
  Json blocks = Json::array({TextBlock("Multiple content types test:"), ImageBlock(),
                             ResourceBlock("test://mixed-content-resource", "application/json",
                                           R"({"test":"data","value":123})")});
  return SetContent(call, blocks, "Multiple content types test: [image] [resource]");
}

int WithLogging(void*, const char*, size_t, const talaria_call* call) {
  if (!TALARIA_CALL_HAS(call, client_log)) return SetText(call, "no MCP client to log to");
  call->client_log(call->context, "info", R"("Tool execution started")");
  Sleep(50);
  call->client_log(call->context, "info", R"("Tool processing data")");
  Sleep(50);
  call->client_log(call->context, "info", R"("Tool execution completed")");
  return SetText(call, "Tool with logging executed successfully");
}

int ErrorHandling(void*, const char*, size_t, const talaria_call* call) {
  SetText(call, "This tool intentionally returns an error for testing");
  return TALARIA_PLUGIN_ERROR;
}

int WithProgress(void*, const char*, size_t, const talaria_call* call) {
  const bool can = TALARIA_CALL_HAS(call, client_progress);
  for (int step = 0; step <= 2; ++step) {
    if (step > 0) Sleep(50);
    if (can) call->client_progress(call->context, step * 50.0, 100.0, nullptr);
  }
  return SetText(call, "Tool with progress executed successfully");
}

void Receive(void* user, const char* text, size_t length) {
  static_cast<std::string*>(user)->assign(text, length);
}

// Sends a request to the client; the answer (or the reason there is none) lands in `answer`.
int Ask(const talaria_call* call, const char* method, const Json& params, std::string& answer) {
  if (!TALARIA_CALL_HAS(call, client_request)) {
    answer = "this host has no MCP client requests";
    return TALARIA_PLUGIN_UNSUPPORTED;
  }
  return call->client_request(call->context, method, params.dump().c_str(), &Receive, &answer);
}

int Sampling(void*, const char* args, size_t length, const talaria_call* call) {
  const Json a = Args(args, length);
  Json params;
  params["messages"] = Json::array(
      {Json{{"role", "user"}, {"content", TextBlock(a.value("prompt", std::string("Hello")))}}});
  params["maxTokens"] = 100;
  std::string answer;
  if (Ask(call, "sampling/createMessage", params, answer) != TALARIA_PLUGIN_OK) {
    SetText(call, "Sampling failed: " + answer);
    return TALARIA_PLUGIN_ERROR;
  }
  const Json result = Json::parse(answer, nullptr, false);
  std::string text = answer;
  if (result.is_object() && result.contains("content") && result["content"].is_object()) {
    text = result["content"].value("text", answer);
  }
  return SetText(call, "LLM response: " + text);
}

// Elicits with `schema` and reports the answer as the scenarios expect.
int Elicit(const talaria_call* call, const std::string& message, const Json& schema,
           const char* prefix) {
  std::string answer;
  if (Ask(call, "elicitation/create", Json{{"message", message}, {"requestedSchema", schema}},
          answer) != TALARIA_PLUGIN_OK) {
    SetText(call, "Elicitation failed: " + answer);
    return TALARIA_PLUGIN_ERROR;
  }
  const Json result = Json::parse(answer, nullptr, false);
  const std::string action = result.is_object() ? result.value("action", std::string("?")) : "?";
  const std::string content =
      result.is_object() && result.contains("content") ? result["content"].dump() : "{}";
  return SetText(call, std::string(prefix) + "action=" + action + ", content=" + content);
}

int Elicitation(void*, const char* args, size_t length, const talaria_call* call) {
  const Json a = Args(args, length);
  Json schema = {{"type", "object"},
                 {"properties",
                  {{"username", {{"type", "string"}, {"description", "User's response"}}},
                   {"email", {{"type", "string"}, {"description", "User's email address"}}}}},
                 {"required", {"username", "email"}}};
  return Elicit(call, a.value("message", std::string("Please provide your information")), schema,
                "User response: ");
}

int ElicitationDefaults(void*, const char*, size_t, const talaria_call* call) {
  Json schema = {
      {"type", "object"},
      {"properties",
       {{"name", {{"type", "string"}, {"description", "User name"}, {"default", "John Doe"}}},
        {"age", {{"type", "integer"}, {"description", "User age"}, {"default", 30}}},
        {"score", {{"type", "number"}, {"description", "User score"}, {"default", 95.5}}},
        {"status",
         {{"type", "string"},
          {"description", "User status"},
          {"enum", {"active", "inactive", "pending"}},
          {"default", "active"}}},
        {"verified",
         {{"type", "boolean"}, {"description", "Verification status"}, {"default", true}}}}},
      {"required", Json::array()}};
  return Elicit(call, "Test client default value handling - please accept with defaults", schema,
                "Elicitation completed: ");
}

int ElicitationEnums(void*, const char*, size_t, const talaria_call* call) {
  Json schema = {
      {"type", "object"},
      {"properties",
       {{"untitledSingle", {{"type", "string"}, {"enum", {"option1", "option2", "option3"}}}},
        {"titledSingle",
         {{"type", "string"},
          {"oneOf",
           {{{"const", "value1"}, {"title", "First Option"}},
            {{"const", "value2"}, {"title", "Second Option"}},
            {{"const", "value3"}, {"title", "Third Option"}}}}}},
        {"legacyEnum",
         {{"type", "string"},
          {"enum", {"opt1", "opt2", "opt3"}},
          {"enumNames", {"Option One", "Option Two", "Option Three"}}}},
        {"untitledMulti",
         {{"type", "array"},
          {"items", {{"type", "string"}, {"enum", {"option1", "option2", "option3"}}}}}},
        {"titledMulti",
         {{"type", "array"},
          {"items",
           {{"anyOf",
             {{{"const", "value1"}, {"title", "First Choice"}},
              {{"const", "value2"}, {"title", "Second Choice"}},
              {{"const", "value3"}, {"title", "Third Choice"}}}}}}}}}},
      {"required", Json::array()}};
  return Elicit(call, "Test enum schema variants - please choose", schema,
                "Elicitation completed: ");
}

int EchoArgs(void*, const char* args, size_t length, const talaria_call* call) {
  call->set_result(call->context, args, length);
  return TALARIA_PLUGIN_OK;
}

// ---- resources ----

int StaticText(void*, const char*, size_t, const talaria_call* call) {
  return SetJson(call,
                 Json::array({{{"uri", "test://static-text"},
                               {"mimeType", "text/plain"},
                               {"text", "This is the content of the static text resource."}}}));
}

int StaticBinary(void*, const char*, size_t, const talaria_call* call) {
  return SetJson(
      call,
      Json::array({{{"uri", "test://static-binary"}, {"mimeType", "image/png"}, {"blob", kPng}}}));
}

int Watched(void*, const char*, size_t, const talaria_call* call) {
  return SetJson(call, Json::array({{{"uri", "test://watched-resource"},
                                     {"mimeType", "text/plain"},
                                     {"text", "This resource may change."}}}));
}

int TemplateData(void*, const char* args, size_t length, const talaria_call* call) {
  const Json a = Args(args, length);
  const std::string id =
      a.contains("variables") ? a["variables"].value("id", std::string()) : std::string();
  const Json data = {{"id", id}, {"templateTest", true}, {"data", "Data for ID: " + id}};
  return SetJson(call, Json::array({{{"uri", a.value("uri", std::string())},
                                     {"mimeType", "application/json"},
                                     {"text", data.dump()}}}));
}

// ---- prompts ----

Json UserMessage(const Json& content) { return Json{{"role", "user"}, {"content", content}}; }

int SimplePrompt(void*, const char*, size_t, const talaria_call* call) {
  return SetJson(call,
                 {{"messages", {UserMessage(TextBlock("This is a simple prompt for testing."))}}});
}

int PromptWithArguments(void*, const char* args, size_t length, const talaria_call* call) {
  const Json a = Args(args, length);
  const std::string text = "Prompt with arguments: arg1='" + a.value("arg1", std::string()) +
                           "', arg2='" + a.value("arg2", std::string()) + "'";
  return SetJson(call, {{"messages", {UserMessage(TextBlock(text))}}});
}

int PromptWithResource(void*, const char* args, size_t length, const talaria_call* call) {
  const Json a = Args(args, length);
  return SetJson(call,
                 {{"messages",
                   {UserMessage(ResourceBlock(a.value("resourceUri", std::string()), "text/plain",
                                              "Embedded resource content for testing.")),
                    UserMessage(TextBlock("Please process the embedded resource above."))}}});
}

int PromptWithImage(void*, const char*, size_t, const talaria_call* call) {
  return SetJson(
      call,
      {{"messages",
        {UserMessage(ImageBlock()), UserMessage(TextBlock("Please analyze the image above."))}}});
}

// ---- registration ----

struct Tool {
  const char* name;
  const char* description;
  const char* parameters;
  talaria_tool_handler handler;
};

constexpr const char* kNoArgs = R"({"type":"object","properties":{},"additionalProperties":false})";

const Tool kTools[] = {
    {"test_simple_text", "Returns simple text content", kNoArgs, SimpleText},
    {"test_image_content", "Returns image content", kNoArgs, ImageContent},
    {"test_audio_content", "Returns audio content", kNoArgs, AudioContent},
    {"test_embedded_resource", "Returns an embedded resource", kNoArgs, EmbeddedResource},
    {"test_multiple_content_types", "Returns text, image and resource content", kNoArgs,
     MixedContent},
    {"test_tool_with_logging", "Sends three log messages while it runs", kNoArgs, WithLogging},
    {"test_error_handling", "Always fails", kNoArgs, ErrorHandling},
    {"test_tool_with_progress", "Reports progress 0, 50 and 100 of 100", kNoArgs, WithProgress},
    {"test_sampling", "Asks the client's model for a completion",
     R"({"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send"}},"required":["prompt"]})",
     Sampling},
    {"test_elicitation", "Asks the user for input",
     R"({"type":"object","properties":{"message":{"type":"string","description":"The message to show"}},"required":["message"]})",
     Elicitation},
    {"test_elicitation_sep1034_defaults", "Elicits with default values (SEP-1034)", kNoArgs,
     ElicitationDefaults},
    {"test_elicitation_sep1330_enums", "Elicits with every enum variant (SEP-1330)", kNoArgs,
     ElicitationEnums},
    {"json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features",
     R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",)"
     R"("$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},)"
     R"("properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},"additionalProperties":false})",
     EchoArgs},
};

int RegisterTool(const talaria_plugin_host* host, const Tool& t) {
  const Json schema = {
      {"name", t.name}, {"description", t.description}, {"parameters", Json::parse(t.parameters)}};
  const std::string text = schema.dump();
  talaria_tool_def def;
  std::memset(&def, 0, sizeof def);
  def.struct_size = sizeof def;
  def.name = t.name;
  def.toolset = kToolset;
  def.schema_json = text.c_str();
  def.handler = t.handler;
  def.parallel = TALARIA_PARALLEL_SAFE;
  return host->register_tool(host->context, &def);
}

int RegisterResource(const talaria_plugin_host* host, const Json& descriptor,
                     talaria_tool_handler read) {
  const std::string text = descriptor.dump();
  talaria_resource_def def;
  std::memset(&def, 0, sizeof def);
  def.struct_size = sizeof def;
  def.toolset = kToolset;
  def.resource_json = text.c_str();
  def.read = read;
  return host->register_resource(host->context, &def);
}

int RegisterPrompt(const talaria_plugin_host* host, const Json& descriptor,
                   talaria_tool_handler get) {
  const std::string text = descriptor.dump();
  talaria_prompt_def def;
  std::memset(&def, 0, sizeof def);
  def.struct_size = sizeof def;
  def.toolset = kToolset;
  def.prompt_json = text.c_str();
  def.get = get;
  return host->register_prompt(host->context, &def);
}

Json Arg(const char* name, const char* description) {
  return Json{{"name", name}, {"description", description}, {"required", true}};
}

}  // namespace

TALARIA_PLUGIN_EXPORT int talaria_register_tools(const talaria_plugin_host* host) {
  if (host->struct_size <
      offsetof(talaria_plugin_host, register_prompt) + sizeof(host->register_prompt)) {
    host->set_error(host->context, "this host cannot register resources and prompts");
    return TALARIA_PLUGIN_ERROR;
  }
  int rc = TALARIA_PLUGIN_OK;
  for (const Tool& t : kTools) rc |= RegisterTool(host, t);
  rc |= RegisterResource(host,
                         {{"uri", "test://static-text"},
                          {"name", "static-text"},
                          {"description", "A static text resource"},
                          {"mimeType", "text/plain"}},
                         StaticText);
  rc |= RegisterResource(host,
                         {{"uri", "test://static-binary"},
                          {"name", "static-binary"},
                          {"description", "A static binary resource (a PNG)"},
                          {"mimeType", "image/png"}},
                         StaticBinary);
  rc |= RegisterResource(host,
                         {{"uri", "test://watched-resource"},
                          {"name", "watched-resource"},
                          {"description", "A resource to subscribe to"},
                          {"mimeType", "text/plain"}},
                         Watched);
  rc |= RegisterResource(host,
                         {{"uriTemplate", "test://template/{id}/data"},
                          {"name", "template-data"},
                          {"description", "Data for an id"},
                          {"mimeType", "application/json"},
                          {"completions", {{"id", {"123", "456"}}}}},
                         TemplateData);
  rc |= RegisterPrompt(
      host, {{"name", "test_simple_prompt"}, {"description", "A prompt without arguments"}},
      SimplePrompt);
  rc |= RegisterPrompt(
      host,
      {{"name", "test_prompt_with_arguments"},
       {"description", "A prompt with two arguments"},
       {"arguments", {Arg("arg1", "First test argument"), Arg("arg2", "Second test argument")}},
       {"completions", {{"arg1", {"paris", "park", "party"}}}}},
      PromptWithArguments);
  rc |= RegisterPrompt(host,
                       {{"name", "test_prompt_with_embedded_resource"},
                        {"description", "A prompt embedding a resource"},
                        {"arguments", {Arg("resourceUri", "URI of the resource to embed")}}},
                       PromptWithResource);
  rc |= RegisterPrompt(
      host, {{"name", "test_prompt_with_image"}, {"description", "A prompt with an image"}},
      PromptWithImage);
  return rc == TALARIA_PLUGIN_OK ? TALARIA_PLUGIN_OK : TALARIA_PLUGIN_ERROR;
}
