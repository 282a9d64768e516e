// Tests of the chip catalog: the shipped chips.d files, the file format's
// validation messages, lookups, and directory overrides.
//
// The shipped catalog is read from $VGPU_TEST_CATALOG_DIR (make check sets
// it), else $srcdir/../etc/chips.d.
#include <cppunit/extensions/HelperMacros.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "devices/chip_catalog.h"
#include "temp_dir.h"
#include "test_paths.h"

namespace vgpu {
namespace {

namespace fs = std::filesystem;

// A valid model file's text; `extra` is spliced in after "id" so a test can
// add keys, and `memory` replaces the memory_bytes value.
std::string ModelJson(const std::string& id, const std::string& name, const std::string& memory = "1073741824",
                      const std::string& extra = "") {
  return "{\"id\": \"" + id + "\", " + extra +
         "\"vendor\": \"acme\", \"gres_type\": \"acme\", \"names\": [\"" + name + "\"],"
         " \"memory_bytes\": " + memory + ", \"compute_units\": 4,"
         " \"device_file\": \"/dev/acme%d\", \"visible_devices_env\": \"ACME_VISIBLE_DEVICES\","
         " \"discovery\": \"none\"}";
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class ChipCatalogTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ChipCatalogTest);
  CPPUNIT_TEST(testEveryShippedFileParses);
  CPPUNIT_TEST(testRequiredModelsPresent);
  CPPUNIT_TEST(testShippedModelsFollowVendorConventions);
  CPPUNIT_TEST(testFindByNameIgnoresCaseAndBlanks);
  CPPUNIT_TEST(testKnowsTypeAndTypes);
  CPPUNIT_TEST(testMalformedJsonNamesFile);
  CPPUNIT_TEST(testMissingKeyNamesFileAndKey);
  CPPUNIT_TEST(testNegativeMemoryNamesFileAndKey);
  CPPUNIT_TEST(testBadProfileNamesIndexedKey);
  CPPUNIT_TEST(testUnknownKeyRejectedCommentAllowed);
  CPPUNIT_TEST(testLaterDirectoryReplacesSameId);
  CPPUNIT_TEST(testNewModelFilePickedUpWithoutRebuild);
  CPPUNIT_TEST(testMissingDirectorySkipped);
  CPPUNIT_TEST(testBadFileInDirectoryNamesPath);
  CPPUNIT_TEST(testOnlyJsonFilesRead);
  CPPUNIT_TEST(testDuplicateIdInOneDirectoryIsError);
  CPPUNIT_TEST(testAddReplacesSameId);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testEveryShippedFileParses() {
    int files = 0;
    for (const auto& entry : fs::directory_iterator(CatalogDir())) {
      if (entry.path().extension() != ".json") continue;
      ++files;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      Result<ChipModel> m = ChipCatalog::ParseModel(text.str(), entry.path().string());
      CPPUNIT_ASSERT_MESSAGE(m.message(), m.ok());
      // By convention the id is the file stem.
      CPPUNIT_ASSERT_EQUAL(entry.path().stem().string(), m->id);
    }
    CPPUNIT_ASSERT(files >= 7);
  }

  void testRequiredModelsPresent() {
    const ChipCatalog c = ShippedCatalog();
    const uint64_t GiB = 1ull << 30;
    struct Want { const char* id; const char* type; uint64_t memory; } wants[] = {
        {"nvidia-a100-80g", "nvidia", 80 * GiB}, {"nvidia-h100", "nvidia", 80 * GiB},
        {"nvidia-h200", "nvidia", 150323855360ull}, {"ascend-910b", "ascend", 64 * GiB},
        {"ascend-310p", "ascend", 24 * GiB}, {"hygon-k100", "dcu", 64 * GiB},
        {"hygon-z100", "dcu", 32 * GiB},
    };
    for (const Want& w : wants) {
      const ChipModel* m = c.FindById(w.id);
      CPPUNIT_ASSERT_MESSAGE(std::string("missing model ") + w.id, m != nullptr);
      CPPUNIT_ASSERT_EQUAL(std::string(w.type), m->gres_type);
      CPPUNIT_ASSERT_EQUAL(w.memory, m->memory_bytes);
      CPPUNIT_ASSERT(m->compute_units >= 8 && m->compute_units <= 256);
    }
  }

  void testShippedModelsFollowVendorConventions() {
    const ChipCatalog c = ShippedCatalog();
    for (const ChipModel& m : c.models()) {
      std::string what = m.id + ": ";
      CPPUNIT_ASSERT_MESSAGE(what + "device_file needs %d", Contains(m.device_file, "%d"));
      if (m.vendor == "nvidia") {
        CPPUNIT_ASSERT_EQUAL(std::string("nvidia"), m.gres_type);
        CPPUNIT_ASSERT_EQUAL(std::string("CUDA_VISIBLE_DEVICES"), m.visible_devices_env);
        CPPUNIT_ASSERT_EQUAL(std::string("nvml"), m.discovery);
        CPPUNIT_ASSERT_EQUAL(std::string("/dev/nvidia%d"), m.device_file);
      } else if (m.vendor == "huawei") {
        CPPUNIT_ASSERT_EQUAL(std::string("ascend"), m.gres_type);
        CPPUNIT_ASSERT_EQUAL(std::string("ASCEND_RT_VISIBLE_DEVICES"), m.visible_devices_env);
        CPPUNIT_ASSERT_EQUAL(std::string("dcmi"), m.discovery);
        CPPUNIT_ASSERT_EQUAL(std::string("/dev/davinci%d"), m.device_file);
      } else if (m.vendor == "hygon") {
        CPPUNIT_ASSERT_EQUAL(std::string("dcu"), m.gres_type);
        CPPUNIT_ASSERT_EQUAL(std::string("HIP_VISIBLE_DEVICES"), m.visible_devices_env);
        CPPUNIT_ASSERT_EQUAL(std::string("rocm-smi"), m.discovery);
        CPPUNIT_ASSERT_EQUAL(std::string("/dev/dri/renderD%d"), m.device_file);
      }
      // A whole-device profile, where there is one, is exactly 100 shares.
      for (const SliceProfile& p : m.profiles) {
        CPPUNIT_ASSERT_MESSAGE(what + p.name, p.shares >= 1 && p.shares <= 100);
        CPPUNIT_ASSERT_MESSAGE(what + p.name, p.memory_bytes <= m.memory_bytes);
      }
    }
    const ChipModel* a100 = c.FindById("nvidia-a100-80g");
    CPPUNIT_ASSERT(a100 != nullptr);
    CPPUNIT_ASSERT_EQUAL(size_t(5), a100->profiles.size());
    CPPUNIT_ASSERT_EQUAL(std::string("4g.40gb"), a100->profiles[3].name);
    CPPUNIT_ASSERT_EQUAL(57u, a100->profiles[3].shares);
  }

  void testFindByNameIgnoresCaseAndBlanks() {
    const ChipCatalog c = ShippedCatalog();
    const ChipModel* m = c.FindByName("nvidia h100 80gb hbm3");
    CPPUNIT_ASSERT(m != nullptr);
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia-h100"), m->id);
    m = c.FindByName("  ASCEND910B3 \n");
    CPPUNIT_ASSERT(m != nullptr);
    CPPUNIT_ASSERT_EQUAL(std::string("ascend-910b3"), m->id);
    m = c.FindByName("K100_AI");
    CPPUNIT_ASSERT(m != nullptr);
    CPPUNIT_ASSERT_EQUAL(std::string("hygon-k100"), m->id);
    CPPUNIT_ASSERT(c.FindByName("NVIDIA GeForce GTX 1080") == nullptr);
    CPPUNIT_ASSERT(c.FindByName("") == nullptr);
    CPPUNIT_ASSERT(c.FindByName("NVIDIA H100 80GB") == nullptr);  // whole names only
  }

  void testKnowsTypeAndTypes() {
    const ChipCatalog c = ShippedCatalog();
    CPPUNIT_ASSERT(c.KnowsType("ascend"));
    CPPUNIT_ASSERT(c.KnowsType("NVIDIA"));
    CPPUNIT_ASSERT(c.KnowsType("dcu"));
    CPPUNIT_ASSERT(c.KnowsType("nvidia-h100"));
    CPPUNIT_ASSERT(c.KnowsType("Ascend-310P"));
    CPPUNIT_ASSERT(!c.KnowsType("vgpu"));
    CPPUNIT_ASSERT(!c.KnowsType(""));
    std::vector<std::string> types = c.Types();
    CPPUNIT_ASSERT_EQUAL(size_t(3), types.size());
    CPPUNIT_ASSERT_EQUAL(std::string("ascend"), types[0]);
    CPPUNIT_ASSERT_EQUAL(std::string("dcu"), types[1]);
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia"), types[2]);
  }

  void testMalformedJsonNamesFile() {
    Result<ChipModel> m = ChipCatalog::ParseModel("{\"id\": \"x\",", "etc/chips.d/x.json");
    CPPUNIT_ASSERT(!m.ok());
    CPPUNIT_ASSERT_MESSAGE(m.message(), Contains(m.message(), "etc/chips.d/x.json: invalid JSON"));
    // One log line: jsoncpp's multi-line report is folded.
    CPPUNIT_ASSERT(m.message().find('\n') == std::string::npos);
    // Strict mode: comments and trailing garbage are errors too.
    CPPUNIT_ASSERT(!ChipCatalog::ParseModel(ModelJson("a", "A") + " x", "a.json").ok());
    CPPUNIT_ASSERT(!ChipCatalog::ParseModel("// c\n" + ModelJson("a", "A"), "a.json").ok());
    CPPUNIT_ASSERT(!ChipCatalog::ParseModel("[1, 2]", "a.json").ok());
  }

  void testMissingKeyNamesFileAndKey() {
    std::string text = ModelJson("a", "A");
    size_t at = text.find("\"compute_units\": 4,");
    text.erase(at, std::string("\"compute_units\": 4,").size());
    Result<ChipModel> m = ChipCatalog::ParseModel(text, "etc/chips.d/a.json");
    CPPUNIT_ASSERT(!m.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("etc/chips.d/a.json: key \"compute_units\" is missing"), m.message());
  }

  void testNegativeMemoryNamesFileAndKey() {
    for (const char* bad : {"-1", "0", "1.5", "\"64G\"", "true"}) {
      Result<ChipModel> m = ChipCatalog::ParseModel(ModelJson("a", "A", bad), "etc/chips.d/x.json");
      CPPUNIT_ASSERT_MESSAGE(bad, !m.ok());
      CPPUNIT_ASSERT_EQUAL(std::string("etc/chips.d/x.json: key \"memory_bytes\" must be a positive integer"),
                           m.message());
    }
    CPPUNIT_ASSERT(ChipCatalog::ParseModel(ModelJson("a", "A", "85899345920"), "x.json").ok());
  }

  void testBadProfileNamesIndexedKey() {
    std::string profiles =
        "\"profiles\": [{\"name\": \"half\", \"shares\": 50, \"memory_bytes\": 1024, \"compute_units\": 2},"
        " {\"name\": \"too-big\", \"shares\": 150, \"memory_bytes\": 1024, \"compute_units\": 2}], ";
    Result<ChipModel> m = ChipCatalog::ParseModel(ModelJson("a", "A", "1073741824", profiles), "p.json");
    CPPUNIT_ASSERT(!m.ok());
    CPPUNIT_ASSERT_MESSAGE(m.message(), Contains(m.message(), "p.json: key \"profiles[1].shares\""));
    std::string bigger = "\"profiles\": [{\"name\": \"x\", \"shares\": 50, \"memory_bytes\": 2147483648,"
                         " \"compute_units\": 2}], ";
    m = ChipCatalog::ParseModel(ModelJson("a", "A", "1073741824", bigger), "p.json");
    CPPUNIT_ASSERT(!m.ok());
    CPPUNIT_ASSERT(Contains(m.message(), "\"profiles[0].memory_bytes\""));
  }

  void testUnknownKeyRejectedCommentAllowed() {
    Result<ChipModel> m = ChipCatalog::ParseModel(ModelJson("a", "A", "1", "\"memroy\": 1, "), "u.json");
    CPPUNIT_ASSERT(!m.ok());
    CPPUNIT_ASSERT(Contains(m.message(), "u.json: key \"memroy\""));
    m = ChipCatalog::ParseModel(ModelJson("a", "A", "1", "\"_comment\": \"free text\", "), "u.json");
    CPPUNIT_ASSERT_MESSAGE(m.message(), m.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("CU"), m->compute_unit_name);  // the default
    CPPUNIT_ASSERT_EQUAL(std::string("u.json"), m->source);
  }

  void testLaterDirectoryReplacesSameId() {
    TempDir site("vgpu-catalog");
    std::string file = site.Write("nvidia-h100.json", ModelJson("nvidia-h100", "NVIDIA H100 80GB HBM3", "42"));
    Result<ChipCatalog> c = ChipCatalog::LoadDirectories(CatalogDir() + ":" + site.path());
    CPPUNIT_ASSERT_MESSAGE(c.message(), c.ok());
    const ChipModel* m = c->FindById("nvidia-h100");
    CPPUNIT_ASSERT(m != nullptr);
    CPPUNIT_ASSERT_EQUAL(uint64_t(42), m->memory_bytes);
    CPPUNIT_ASSERT_EQUAL(file, m->source);
    CPPUNIT_ASSERT_EQUAL(size_t(8), c->models().size());  // replaced, not added (8 shipped)
    // In the other order the shipped file wins.
    c = ChipCatalog::LoadDirectories(site.path() + ":" + CatalogDir());
    CPPUNIT_ASSERT(c.ok());
    CPPUNIT_ASSERT_EQUAL(uint64_t(80) << 30, c->FindById("nvidia-h100")->memory_bytes);
  }

  void testNewModelFilePickedUpWithoutRebuild() {
    TempDir site("vgpu-catalog");
    std::string dirs = CatalogDir() + ":" + site.path();
    Result<ChipCatalog> before = ChipCatalog::LoadDirectories(dirs);
    CPPUNIT_ASSERT(before.ok());
    CPPUNIT_ASSERT(before->FindByName("Acme X1") == nullptr);
    site.Write("acme-x1.json", ModelJson("acme-x1", "Acme X1"));
    Result<ChipCatalog> after = ChipCatalog::LoadDirectories(dirs);
    CPPUNIT_ASSERT_MESSAGE(after.message(), after.ok());
    const ChipModel* m = after->FindByName("ACME X1");
    CPPUNIT_ASSERT(m != nullptr);
    CPPUNIT_ASSERT_EQUAL(std::string("acme-x1"), m->id);
    CPPUNIT_ASSERT(after->KnowsType("acme"));
    CPPUNIT_ASSERT_EQUAL(before->models().size() + 1, after->models().size());
  }

  void testMissingDirectorySkipped() {
    Result<ChipCatalog> c = ChipCatalog::LoadDirectories("/nonexistent/vgpu/chips.d::" + CatalogDir());
    CPPUNIT_ASSERT_MESSAGE(c.message(), c.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(8), c->models().size());  // the shipped files
    Result<ChipCatalog> empty = ChipCatalog::LoadDirectories("/nonexistent/vgpu/chips.d");
    CPPUNIT_ASSERT(empty.ok());
    CPPUNIT_ASSERT(empty->models().empty());
  }

  void testBadFileInDirectoryNamesPath() {
    TempDir site("vgpu-catalog");
    site.Write("good.json", ModelJson("good", "Good"));
    std::string bad = site.Write("zz-bad.json", ModelJson("bad", "Bad", "-5"));
    std::string truncated = site.Write("m-truncated.json", "{\n  \"id\": \"trunc\",\n  \"names\": [");
    std::string empty = site.Write("n-empty.json", "");
    Result<ChipCatalog> c = ChipCatalog::LoadDirectories(site.path());
    // The good model stays; each bad file is skipped and named.
    CPPUNIT_ASSERT_MESSAGE(c.message(), c.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(1), c->models().size());
    CPPUNIT_ASSERT_EQUAL(std::string("good"), c->models()[0].id);
    CPPUNIT_ASSERT_EQUAL(size_t(3), c->problems().size());
    CPPUNIT_ASSERT_MESSAGE(c->problems()[0], Contains(c->problems()[0], truncated + ": invalid JSON") &&
                                                 Contains(c->problems()[0], "Line 3, Column"));
    CPPUNIT_ASSERT_MESSAGE(c->problems()[1], Contains(c->problems()[1], empty + ": invalid JSON") &&
                                                 Contains(c->problems()[1], "Line 1, Column 1"));
    CPPUNIT_ASSERT_EQUAL(bad + ": key \"memory_bytes\" must be a positive integer; file skipped", c->problems()[2]);
    // A path that is a file, not a directory, is skipped and named too.
    Result<ChipCatalog> file = ChipCatalog::LoadDirectories(bad);
    CPPUNIT_ASSERT(file.ok() && file->models().empty());
    CPPUNIT_ASSERT_MESSAGE(file->problems().front(), Contains(file->problems().front(), "not a directory"));
  }

  void testOnlyJsonFilesRead() {
    TempDir site("vgpu-catalog");
    site.Write("README", "not json");
    site.Write("old.json.bak", "{");
    site.Write("b.json", ModelJson("b", "B"));
    site.Write("a.json", ModelJson("a", "A"));
    Result<ChipCatalog> c = ChipCatalog::LoadDirectories(site.path());
    CPPUNIT_ASSERT_MESSAGE(c.message(), c.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(2), c->models().size());
    CPPUNIT_ASSERT_EQUAL(std::string("a"), c->models()[0].id);  // sorted by file name
  }

  void testDuplicateIdInOneDirectoryIsError() {
    TempDir site("vgpu-catalog");
    site.Write("a.json", ModelJson("same", "A"));
    std::string copy = site.Write("b.json", ModelJson("same", "B"));
    Result<ChipCatalog> c = ChipCatalog::LoadDirectories(site.path());
    CPPUNIT_ASSERT(c.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(1), c->models().size());
    CPPUNIT_ASSERT_EQUAL(std::string("A"), c->models()[0].names[0]);  // the first file's
    CPPUNIT_ASSERT_EQUAL(size_t(1), c->problems().size());
    CPPUNIT_ASSERT_MESSAGE(c->problems()[0], Contains(c->problems()[0], copy + ": key \"id\"") &&
                                                 Contains(c->problems()[0], "file skipped"));
  }

  void testAddReplacesSameId() {
    ChipCatalog c;
    ChipModel m;
    m.id = "x";
    m.gres_type = "t1";
    m.names = {"X"};
    c.Add(m);
    m.gres_type = "t2";
    c.Add(m);
    CPPUNIT_ASSERT_EQUAL(size_t(1), c.models().size());
    CPPUNIT_ASSERT(c.KnowsType("t2"));
    CPPUNIT_ASSERT(!c.KnowsType("t1"));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ChipCatalogTest);

}  // namespace vgpu
