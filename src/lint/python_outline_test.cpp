// Class outlines from the embedded interpreter's AST: what the RL environment discovery reads.
#include "talaria/lint/python_outline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include <nlohmann/json.hpp>

namespace talaria::lint {
namespace {

TEST(PythonOutline, ReadsBasesAttributesDocstringsAndFields) {
  constexpr std::string_view kSource = R"py(
import atroposlib.envs as envs
from pydantic import Field

class GsmConfig(envs.BaseEnvConfig):
    group_size: int = Field(default=16, description="Completions per prompt")
    temperature: float = 0.7
    tags: list = Field(["a", "b"])
    mode = SomeEnum.FAST

class GsmEnv(envs.BaseEnv, Generic[T]):
    """Grade-school math.

    More text."""
    name = "gsm8k"
    env_config_cls = GsmConfig
    weight = float("nan")

    def setup(self):
        class Inner(Base): pass
)py";
  auto classes = OutlinePythonClasses(kSource, "gsm.py");
  ASSERT_TRUE(classes.has_value()) << classes.error().message();
  ASSERT_EQ(classes->size(), 3U);
  const PythonClass& config = (*classes)[0];
  EXPECT_EQ(config.name, "GsmConfig");
  EXPECT_EQ(config.bases, std::vector<std::string>{"BaseEnvConfig"});
  ASSERT_EQ(config.fields.size(), 3U);
  EXPECT_EQ(config.fields[0].name, "group_size");
  EXPECT_EQ(config.fields[0].annotation, "int");
  ASSERT_TRUE(config.fields[0].default_value.has_value());
  ASSERT_TRUE(config.fields[0].default_value->value.has_value());
  EXPECT_EQ(*config.fields[0].default_value->value, Json(16));
  EXPECT_EQ(config.fields[0].description, "Completions per prompt");
  EXPECT_EQ(config.fields[1].default_value->value.value_or(Json()), Json(0.7));
  EXPECT_EQ(config.fields[2].default_value->value.value_or(Json()), Json::array({"a", "b"}));
  ASSERT_NE(config.Attribute("mode"), nullptr);
  EXPECT_EQ(config.Attribute("mode")->name, "SomeEnum.FAST");

  const PythonClass& env = (*classes)[1];
  EXPECT_EQ(env.name, "GsmEnv");
  EXPECT_EQ(env.line, 11);
  EXPECT_EQ(env.bases, (std::vector<std::string>{"BaseEnv", "Generic"}));
  EXPECT_EQ(env.docstring, "Grade-school math.\n\nMore text.");
  ASSERT_NE(env.Attribute("name"), nullptr);
  EXPECT_EQ(env.Attribute("name")->value.value_or(Json()), Json("gsm8k"));
  EXPECT_EQ(env.Attribute("env_config_cls")->name, "GsmConfig");
  EXPECT_EQ(env.Attribute("weight"), nullptr);  // a call is not a literal
  EXPECT_EQ((*classes)[2].name, "Inner");
}

TEST(PythonOutline, NeverRunsTheFile) {
  // Module-level code and class bodies would write the marker if anything executed them.
  constexpr std::string_view kSource = R"py(
import os
os.system("touch /tmp/talaria-outline-ran")
class Env(BaseEnv):
    open("/tmp/talaria-outline-ran", "w").write("x")
    name = __import__("os").getcwd()
)py";
  auto classes = OutlinePythonClasses(kSource, "evil.py");
  ASSERT_TRUE(classes.has_value()) << classes.error().message();
  ASSERT_EQ(classes->size(), 1U);
  EXPECT_EQ((*classes)[0].Attribute("name"), nullptr);
  EXPECT_NE(::access("/tmp/talaria-outline-ran", F_OK), 0);
}

TEST(PythonOutline, ASyntaxErrorNamesItsLine) {
  auto r = OutlinePythonClasses("class A:\n    x = (\n", "bad.py");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("SyntaxError"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find("line"), std::string::npos);
}

TEST(PythonOutline, HostileSourcesGiveErrorsNotCrashes) {
  EXPECT_FALSE(OutlinePythonClasses(std::string(100000, '(') + "\n", "deep.py").has_value());
  EXPECT_FALSE(OutlinePythonClasses(std::string("class A: pass\0x", 15), "nul.py").has_value());
  auto latin1 = OutlinePythonClasses("class Caf\xe9(Base): pass\n", "latin1.py");
  // The bad byte is replaced; U+FFFD is not an identifier character, so it does not parse.
  EXPECT_FALSE(latin1.has_value());
  auto empty = OutlinePythonClasses("", "empty.py");
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
}

}  // namespace
}  // namespace talaria::lint
