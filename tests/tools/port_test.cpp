// tests/tools/port_test.cpp — tools/port.sh: the rename rule of docs/PORTING.md applied to a copy of a libtorch-style
// tree (sources, CMake, other files), the original untouched, what cannot be ported listed, bad arguments refused
// with nothing written. (tests/porting/ builds and runs a ported program.)
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "traces/temp_dir.h"

namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs port.sh; returns its exit status and what it printed (stdout and stderr).
int port(const std::string& args, std::string& out) {
  const std::string cmd = std::string(GLASSBOX_PORT_SH) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  out.clear();
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const char* kSource = R"(#include <torch/torch.h>
#include <torch/nn/module.h>
#include <vector>
using namespace torch;
struct NetImpl : torch::nn::Module {
  at::Tensor forward(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2, "2-D input");
    AT_ASSERT(x.numel() > 0);
    if (x.size(0) > 99) AT_ERROR("too big: ", x.size(0));
    c10::IntArrayRef s = x.sizes();
    const char* t = c10::toString(x.scalar_type());
    return x;
  }
};
TORCH_MODULE(Net);
int data_at::x, my_torch::y;  // other names that end in at:: or torch:: stay
auto m = torch::jit::load("model.pt");
)";

const char* kCMake = R"(cmake_minimum_required(VERSION 3.18)
project(net)
find_package(Torch REQUIRED)
set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} ${TORCH_CXX_FLAGS}")
add_executable(net net.cpp)
target_link_libraries(net "${TORCH_LIBRARIES}")
)";

}  // namespace

TEST_CASE("port.sh renames a copy of a libtorch tree and lists what it cannot port") {
  TempDir tmp;
  const fs::path src = fs::path(tmp.file("libtorch_net")), dest = fs::path(tmp.file("ported"));
  write(src / "net.cpp", kSource);
  write(src / "CMakeLists.txt", kCMake);
  write(src / "data" / "notes.txt", "torch::nn stays here: not a source\n");
  std::string out;
  REQUIRE(port(src.string() + " " + dest.string(), out) == 0);
  CAPTURE(out);
  CHECK(out.find("renamed in 2 file(s)") != std::string::npos);
  CHECK(out.find("net.cpp:17:auto m = torch::jit::load") != std::string::npos);  // the line a person must port

  const std::string cpp = read(dest / "net.cpp");
  CAPTURE(cpp);
  CHECK(cpp.rfind("#include <glassbox/glassbox.h>\n#include <vector>\n", 0) == 0);  // two torch includes, one left
  CHECK(cpp.find("torch") == cpp.find("my_torch::y") + 3);  // the only "torch" left is in someone else's name
  CHECK(cpp.find("struct NetImpl : gb::nn::Module") != std::string::npos);
  CHECK(cpp.find("using namespace gb;\n") != std::string::npos);
  CHECK(cpp.find("gb::Tensor forward(gb::Tensor x)") != std::string::npos);
  CHECK(cpp.find("GB_CHECK(x.dim() == 2, \"2-D input\");") != std::string::npos);
  CHECK(cpp.find("GB_ASSERT(x.numel() > 0);") != std::string::npos);
  CHECK(cpp.find("GB_CHECK(false, \"too big: \", x.size(0));") != std::string::npos);
  CHECK(cpp.find("gb::IntArrayRef s") != std::string::npos);
  CHECK(cpp.find("const char* t = gb::to_string(x.scalar_type());") != std::string::npos);
  CHECK(cpp.find("GB_MODULE(Net);") != std::string::npos);
  CHECK(cpp.find("int data_at::x, my_torch::y;") != std::string::npos);

  const std::string cmake = read(dest / "CMakeLists.txt");
  CAPTURE(cmake);
  CHECK(cmake.find("find_package(glassbox REQUIRED)") != std::string::npos);
  CHECK(cmake.find("set(CMAKE_CXX_FLAGS \"${CMAKE_CXX_FLAGS}\")") != std::string::npos);
  CHECK(cmake.find("target_link_libraries(net glassbox::engine)") != std::string::npos);
  CHECK(cmake.find("TORCH") == std::string::npos);

  CHECK(read(dest / "data" / "notes.txt") == "torch::nn stays here: not a source\n");
  CHECK(read(src / "net.cpp") == kSource);  // the original is untouched
  CHECK(read(src / "CMakeLists.txt") == kCMake);
}

TEST_CASE("port.sh ports a single file too") {
  TempDir tmp;
  const fs::path src = fs::path(tmp.file("one.cpp")), dest = fs::path(tmp.file("out")) / "one.cpp";
  write(src, "#include <torch/torch.h>\nauto t = torch::ones({2});\n");
  std::string out;
  REQUIRE(port(src.string() + " " + dest.string(), out) == 0);
  CHECK(read(dest) == "#include <glassbox/glassbox.h>\nauto t = gb::ones({2});\n");
}

TEST_CASE("port.sh --check lists the symbols glassbox lacks, with their uses and the nearest glassbox spelling") {
  TempDir tmp;
  const fs::path src = fs::path(tmp.file("prog"));
  // libtorch code: one symbol glassbox lacks twice (searchsorted), one it spells otherwise (dtype().name():
  // gb::to_string), one that compiles (torch::ones)
  write(src / "main.cpp",
        "#include <torch/torch.h>\n"
        "int main() {\n"
        "  auto a = torch::ones({2, 2});\n"
        "  auto b = torch::searchsorted(a, a);\n"
        "  auto c = torch::searchsorted(a, a, true);\n"
        "  auto d = a.dtype().name();\n"
        "  return 0;\n"
        "}\n");
  std::string out;
  CHECK(port("--check " + src.string() + " " + tmp.file("ported"), out) == 1);
  CHECK(out.find("2 symbol(s) the ported code uses that glassbox lacks") != std::string::npos);
  CHECK(out.find("gb::searchsorted") != std::string::npos);
  CHECK(out.find("2 use(s): main.cpp:4, main.cpp:5") != std::string::npos);
  CHECK(out.find("gb::ScalarType::name") != std::string::npos);
  CHECK(out.find("nearest glassbox spelling: gb::to_string(dtype)") != std::string::npos);
  CHECK(out.find("ones") == std::string::npos);

  write(fs::path(tmp.file("clean")) / "main.cpp",
        "#include <torch/torch.h>\nint main() { return torch::ones({2}).sum().item<int>() == 2 ? 0 : 1; }\n");
  CHECK(port("--check " + tmp.file("clean") + " " + tmp.file("clean_ported"), out) == 0);
  CHECK(out.find("1 file(s) compile against glassbox's headers: nothing glassbox lacks") != std::string::npos);
}

TEST_CASE("port.sh refuses bad arguments and writes nothing") {
  TempDir tmp;
  const fs::path src = fs::path(tmp.file("src")), taken = fs::path(tmp.file("taken"));
  write(src / "a.cpp", "torch::Tensor t;\n");
  write(taken / "keep.txt", "mine\n");
  std::string out;
  CHECK(port(src.string() + " " + taken.string(), out) == 2);
  CHECK(out.find("already exists") != std::string::npos);
  CHECK(read(taken / "keep.txt") == "mine\n");
  CHECK_FALSE(fs::exists(taken / "src"));
  CHECK(port(src.string() + " " + (src / "inside").string(), out) == 2);
  CHECK(out.find("inside") != std::string::npos);
  CHECK_FALSE(fs::exists(src / "inside"));
  CHECK(port((src / "missing").string() + " " + tmp.file("x"), out) == 2);
  CHECK(out.find("does not exist") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp.file("x")));
  CHECK(port(src.string(), out) == 2);
  CHECK(out.find("usage: tools/port.sh [--check] SOURCE DEST") != std::string::npos);
  CHECK(read(src / "a.cpp") == "torch::Tensor t;\n");
}
