#include "faultline/harness/scenario/derivation.hpp"

#include <cctype>
#include <sstream>
#include <vector>

namespace faultline::harness {

namespace {

// A recursive-descent reader of + - * / ( ) over integers and named inputs.
class FormulaReader {
 public:
  FormulaReader(const std::string& text, const std::map<std::string, uint64_t>& inputs)
      : text_(text), inputs_(inputs) {}

  Result<Evaluated> read() {
    auto value = sum();
    if (!value.ok()) return value;
    skip_spaces();
    if (at_ < text_.size()) return problem("an operator or the end");
    return value;
  }

 private:
  Result<Evaluated> sum() {
    auto left = product();
    for (skip_spaces(); left.ok() && at_ < text_.size() && (peek() == '+' || peek() == '-');
         skip_spaces()) {
      const char op = text_[at_++];
      auto right = product();
      if (!right.ok()) return right;
      if (op == '-' && right->value > left->value) return problem("a formula that stays >= 0");
      uint64_t value = left->value - right->value;
      if (op == '+' && __builtin_add_overflow(left->value, right->value, &value))
        return problem("a formula whose value fits 64 bits (the sum overflows)");
      left = Evaluated{value, left->derivation + " " + op + " " + right->derivation};
    }
    return left;
  }

  Result<Evaluated> product() {
    auto left = factor();
    for (skip_spaces(); left.ok() && at_ < text_.size() && (peek() == '*' || peek() == '/');
         skip_spaces()) {
      const char op = text_[at_++];
      auto right = factor();
      if (!right.ok()) return right;
      if (op == '/' && right->value == 0) return problem("a divisor that is not 0");
      uint64_t value = op == '/' ? left->value / right->value : 0;
      if (op == '*' && __builtin_mul_overflow(left->value, right->value, &value))
        return problem("a formula whose value fits 64 bits (the product overflows)");
      left = Evaluated{value, left->derivation + (op == '*' ? " x " : " / ") + right->derivation};
    }
    return left;
  }

  Result<Evaluated> factor() {
    skip_spaces();
    if (at_ >= text_.size()) return problem("a number, an input or '('");
    if (peek() == '(') {
      // Each level is three frames of this reader: 100,000 '(' overflowed the stack.
      if (++depth_ > kDeepest) return problem("at most 64 parentheses inside each other");
      ++at_;
      auto inner = sum();
      --depth_;
      skip_spaces();
      if (!inner.ok()) return inner;
      if (at_ >= text_.size() || text_[at_] != ')') return problem("')'");
      ++at_;
      return Evaluated{inner->value, "(" + inner->derivation + ")"};
    }
    const size_t start = at_;
    if (std::isdigit(static_cast<unsigned char>(peek())) != 0) {
      while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_])) != 0) ++at_;
      const std::string digits = text_.substr(start, at_ - start);
      if (digits.size() > 20 || (digits.size() == 20 && digits > "18446744073709551615"))
        return problem("a number that fits 64 bits");
      return Evaluated{std::stoull(digits), digits};
    }
    while (at_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[at_])) != 0 || text_[at_] == '_'))
      ++at_;
    const std::string name = text_.substr(start, at_ - start);
    if (name.empty()) return problem("a number, an input or '('");
    auto input = inputs_.find(name);
    if (input == inputs_.end()) {
      std::string known;
      for (const auto& [key, value] : inputs_) known += (known.empty() ? "" : ", ") + key;
      return Error{ErrorCode::kInvalidArgument, "unknown input '" + name + "' (inputs: " +
                                                    (known.empty() ? "none" : known) + ")"};
    }
    return Evaluated{input->second, name + " " + std::to_string(input->second)};
  }

  char peek() const { return text_[at_]; }
  void skip_spaces() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_])) != 0) ++at_;
  }
  Error problem(const std::string& expected) const {
    return {ErrorCode::kInvalidArgument,
            "expected " + expected + " at character " + std::to_string(at_ + 1)};
  }

  static constexpr size_t kDeepest = 64;
  const std::string& text_;
  const std::map<std::string, uint64_t>& inputs_;
  size_t at_ = 0;
  size_t depth_ = 0;
};

}  // namespace

Result<Evaluated> evaluate_formula(const std::string& formula,
                                   const std::map<std::string, uint64_t>& inputs) {
  return FormulaReader(formula, inputs).read();
}

Result<uint64_t> evaluate_derivation(const std::string& derivation) {
  // "NAME VALUE" becomes VALUE, "x" becomes "*"; what is left is a formula of numbers.
  std::istringstream words(derivation);
  std::vector<std::string> tokens;
  for (std::string word; words >> word;) tokens.push_back(word);
  std::string formula;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    const bool name = std::isalpha(static_cast<unsigned char>(token[0])) != 0 || token[0] == '_';
    if (token == "x") {
      formula += " *";
    } else if (name && i + 1 < tokens.size() &&
               std::isdigit(static_cast<unsigned char>(tokens[i + 1][0])) != 0) {
      continue;  // the name of the value that follows
    } else {
      formula += " " + token;
    }
  }
  auto evaluated = evaluate_formula(formula, {});
  if (!evaluated.ok())
    return Error{ErrorCode::kInvalidArgument,
                 "a derivation of numbers, names followed by their values, + - x / and "
                 "parentheses (\"3 x max_tokens_per_rank 65536 + 1\"); " +
                     evaluated.error().message};
  return evaluated->value;
}

}  // namespace faultline::harness
