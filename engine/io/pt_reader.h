// engine/io/pt_reader.h — the object tree of a PyTorch zip file's data.pkl (engine/io/pt_import.cpp), for readers
// other than load_pt (glassbox/io/archive.h's InputArchive).
#pragma once

#include <string>

#include "io/pickle.h"

namespace gb::detail {

// Plain values as the Unpickler makes them; a tensor is Kind::object with str "tensor" and .tensor (undefined with
// .note saying why, for a dtype glassbox lacks); a TorchScript module object (libtorch's archives) is Kind::object
// with str "module" and its attributes, in order, in .pairs. Damage and disallowed globals throw gb::Error naming
// the file.
PyRef read_pt_pickle(const std::string& path);

}  // namespace gb::detail
