#include "core/canonicaljson.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <vector>

#include "core/utf8.h"

namespace idem {

using nlohmann::json;

namespace {
    // Error messages locate values with a JSON Pointer (RFC 6901), which needs no quoting rules
    // of our own and which jq and most JSON tools understand.
    void appendPointerSegment(std::string& out, std::string_view segment)
    {
        out.push_back('/');
        for (char c : segment) {
            if (c == '~')
                out += "~0";
            else if (c == '/')
                out += "~1";
            else
                out.push_back(c);
        }
    }

    std::string describeLocation(const std::string& pointer)
    {
        return pointer.empty() ? std::string("the top level") : "'" + quoteForMessage(pointer, 200) + "'";
    }

    // Reads like const char* and records how far nlohmann's lexer has read. The lexer takes a
    // NUL byte for the end of the input (it was written for C strings) and its strict mode
    // then reports success, so "{}\0anything" parsed as "{}"; the parser instead runs in
    // non-strict mode, stopping after one value, and the bytes after it are checked here.
    class TrackingIterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = char;
        using difference_type = std::ptrdiff_t;
        using pointer = const char*;
        using reference = const char&;

        TrackingIterator(const char* at, const char** readTo)
            : m_at(at)
            , m_readTo(readTo)
        {
        }
        reference operator*() const { return *m_at; }
        TrackingIterator& operator++()
        {
            *m_readTo = ++m_at;
            return *this;
        }
        TrackingIterator operator++(int)
        {
            auto before = *this;
            ++*this;
            return before;
        }
        friend bool operator==(const TrackingIterator& a, const TrackingIterator& b) { return a.m_at == b.m_at; }

    private:
        const char* m_at;
        const char** m_readTo;
    };

    bool isJsonWhitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

    // Where the top-level number of text that nlohmann accepted as one ends: the longest match
    // of RFC 8259's  -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?  after the optional
    // byte order mark and whitespace the lexer skipped. The lexer matches greedily too.
    std::size_t numberEnd(std::string_view text)
    {
        std::size_t i = text.substr(0, 3) == "\xef\xbb\xbf" ? 3 : 0;
        const auto digit = [&] { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
        const auto digits = [&] {
            while (digit())
                ++i;
        };
        while (i < text.size() && isJsonWhitespace(text[i]))
            ++i;
        if (i < text.size() && text[i] == '-')
            ++i;
        if (i < text.size() && text[i] == '0')
            ++i;
        else
            digits();
        if (i + 1 < text.size() && text[i] == '.' && text[i + 1] >= '0' && text[i + 1] <= '9') {
            ++i;
            digits();
        }
        if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
            std::size_t j = i + 1;
            if (j < text.size() && (text[j] == '+' || text[j] == '-'))
                ++j;
            if (j < text.size() && text[j] >= '0' && text[j] <= '9') {
                i = j;
                digits();
            }
        }
        return i;
    }

    std::string describeByte(char c)
    {
        static constexpr char hex[] = "0123456789abcdef";
        const auto u = static_cast<unsigned char>(c);
        std::string out = "byte 0x";
        out.push_back(hex[u >> 4]);
        out.push_back(hex[u & 0x0F]);
        if (u > 0x20 && u < 0x7F)
            out.append(" ('").append(1, c).append("')");
        return out;
    }

    // The integer an integral double's ECMAScript form names, in plain digits: "1e+21" is
    // "1000000000000000000000"; below 10^21 the form has no exponent already.
    std::string plainInteger(const std::string& es)
    {
        const auto e = es.find('e');
        if (e == std::string::npos)
            return es;
        std::string digits = es.substr(0, e);
        int zeros = std::stoi(es.substr(e + 1));
        if (const auto dot = digits.find('.'); dot != std::string::npos) {
            zeros -= static_cast<int>(digits.size() - dot - 1);
            digits.erase(dot, 1);
        }
        return digits + std::string(static_cast<std::size_t>(std::max(zeros, 0)), '0');
    }

    // RFC 8785 writes every number as its double. An integer whose double's form names another
    // integer (9007199254740993 reads as 9007199254740992) would share a digest with that one:
    // refused, from text and from a built int64 / uint64 alike (clients/corpus/README.md).
    void checkInteger(const std::string& written, double d)
    {
        if (d == 0)
            return; // "0" and "-0" are zero (RFC 8785 writes -0 as 0)
        const std::string canonical = esNumberToString(d);
        if (plainInteger(canonical) != written)
            throw JsonError(JsonErrorKind::NumberRange,
                "integer " + quoteForMessage(written, 64) + " is not a double's value: RFC 8785 would write it as "
                    + canonical + ", as another integer (send integers past 2^53 as strings)");
    }

    // A literal with a fraction or an exponent is a decimal approximation that RFC 8785 rounds
    // to the nearest double; one that is not zero but rounds to zero (1e-400) is refused.
    void checkDecimal(std::string_view text, double d)
    {
        if (d != 0)
            return;
        const auto mantissa = text.substr(0, text.find_first_of("eE"));
        if (mantissa.find_first_of("123456789") != std::string_view::npos)
            throw JsonError(JsonErrorKind::NumberRange,
                "number " + quoteForMessage(text, 64) + " is not zero but rounds to 0 as a double (below 2.5e-324)");
    }

    // Builds the DOM from nlohmann's SAX events so that a duplicate key is seen (nlohmann's own
    // DOM parser silently keeps the last one) and deep nesting is refused before it is built.
    class StrictBuilder {
    public:
        StrictBuilder(std::string_view text, const char* const& readTo, JsonNumbers numbers)
            : m_text(text)
            , m_readTo(readTo)
            , m_numbers(numbers)
        {
        }

        json result;
        bool topLevelIsNumber = false; // the lexer reads one byte past a number

        bool null() { return add(json(nullptr)); }
        bool boolean(bool v) { return add(json(v)); }
        bool number_integer(json::number_integer_t v)
        {
            judge([&] { checkInteger(std::to_string(v), static_cast<double>(v)); });
            return addNumber(json(v));
        }
        bool number_unsigned(json::number_unsigned_t v)
        {
            judge([&] { checkInteger(std::to_string(v), static_cast<double>(v)); });
            return addNumber(json(v));
        }
        // Past 64 bits an integer literal comes as a double, with its text. An infinite one
        // never gets here (the lexer refuses it: number_range, "number overflow").
        bool number_float(json::number_float_t v, const json::string_t& text)
        {
            judge([&] {
                if (text.find_first_of(".eE") == std::string::npos)
                    checkInteger(text, v);
                else
                    checkDecimal(text, v);
            });
            return addNumber(json(v));
        }
        bool string(json::string_t& v) { return add(json(std::move(v))); }
        bool binary(json::binary_t& /*v*/) { throw JsonError(JsonErrorKind::Unsupported, "binary values have no JSON text form"); }
        bool start_object(std::size_t /*elements*/) { return open(json::object()); }
        bool start_array(std::size_t /*elements*/) { return open(json::array()); }
        bool end_object() { return close(); }
        bool end_array() { return close(); }

        bool key(json::string_t& name)
        {
            if (m_stack.back().container->contains(name))
                throw JsonError(JsonErrorKind::DuplicateKey, "invalid JSON: duplicate key \"" + quoteForMessage(name) + "\" in the object at "
                    + describeLocation(currentPointer())
                    + " (RFC 8785 requires unique keys; parsers disagree on which one wins)");
            m_pendingKey = std::move(name);
            return true;
        }

        bool parse_error(std::size_t position, const std::string& /*lastToken*/, const json::exception& e)
        {
            // The lexer stopped at a NUL byte outside a string and called it the end of the
            // input ("unexpected end of input"): say what is really there. Inside a string
            // its own message (control character U+0000 must be escaped) is the better one.
            const auto readBytes = static_cast<std::size_t>(m_readTo - m_text.data());
            if (readBytes > 0 && m_text[readBytes - 1] == '\0'
                && std::string_view(e.what()).find("U+0000") == std::string_view::npos)
                throw JsonError(kindOf(e), "invalid JSON: unexpected " + describeByte('\0') + " at offset "
                    + std::to_string(readBytes - 1) + " (JSON text cannot hold a NUL byte outside a string escape)");
            // nlohmann prefixes "[json.exception.parse_error.101] "; the rest already says
            // where (line and column) for syntax errors, but not for number overflow.
            std::string reason = e.what();
            if (const auto end = reason.find("] ");
                reason.rfind("[json.exception.", 0) == 0 && end != std::string::npos)
                reason.erase(0, end + 2);
            if (reason.find(" line ") == std::string::npos)
                reason += " (at byte " + std::to_string(position) + ")";
            // The reason quotes the offending input ("last read: ..."), which may be any bytes.
            throw JsonError(kindOf(e), "invalid JSON: " + quoteForMessage(reason, 400));
        }

    private:
        // The kind of what nlohmann's parser refused. Its lexer's reason comes before "; last
        // read: '...'" (which quotes the input, so it is not searched); the phrases and ids are
        // nlohmann 3.11's (parse_error 101, out_of_range 406).
        JsonErrorKind kindOf(const json::exception& e) const
        {
            if (e.id == 406)
                return JsonErrorKind::NumberRange;
            std::string_view what(e.what());
            what = what.substr(0, what.find("; last read: "));
            if (what.find("invalid string: ill-formed UTF-8 byte") != std::string_view::npos)
                return JsonErrorKind::InvalidUtf8;
            if (what.find("invalid string: surrogate U+") != std::string_view::npos)
                return JsonErrorKind::LoneSurrogate;
            std::string_view rest = m_text.substr(0, 3) == "\xef\xbb\xbf" ? m_text.substr(3) : m_text;
            if (std::all_of(rest.begin(), rest.end(), isJsonWhitespace))
                return JsonErrorKind::Empty;
            return JsonErrorKind::Syntax;
        }

        struct Level {
            json* container;
            std::string segment; // how the parent reaches it, for error messages
        };
        std::string_view m_text;
        const char* const& m_readTo;
        JsonNumbers m_numbers;
        std::vector<Level> m_stack;
        std::string m_pendingKey;

        // Pointers stay valid: only the innermost open container grows, and every pointer on
        // the stack refers to an ancestor's element or to the container itself.
        json* place(json&& v, std::string* segment)
        {
            if (m_stack.empty()) {
                result = std::move(v);
                return &result;
            }
            json& parent = *m_stack.back().container;
            if (parent.is_array()) {
                if (segment)
                    *segment = std::to_string(parent.size());
                parent.push_back(std::move(v));
                return &parent.back();
            }
            if (segment)
                *segment = m_pendingKey;
            auto& members = parent.get_ref<json::object_t&>();
            return &members.emplace(std::move(m_pendingKey), std::move(v)).first->second;
        }

        // A number refused where it stands, as the lexer's overflow is.
        template <typename Check> void judge(Check&& check) const
        {
            if (m_numbers != JsonNumbers::Digest)
                return;
            try {
                check();
            } catch (const JsonError& e) {
                std::string at = currentPointer();
                if (!m_stack.empty()) {
                    const json& parent = *m_stack.back().container;
                    appendPointerSegment(at, parent.is_array() ? std::to_string(parent.size()) : m_pendingKey);
                }
                throw JsonError(e.kind(), "invalid JSON: " + std::string(e.what()) + ", at " + describeLocation(at));
            }
        }

        bool addNumber(json&& v)
        {
            topLevelIsNumber = m_stack.empty();
            return add(std::move(v));
        }

        bool add(json&& v)
        {
            place(std::move(v), nullptr);
            return true;
        }

        bool open(json&& container)
        {
            if (m_stack.size() >= maxJsonDepth)
                throw JsonError(JsonErrorKind::Depth, "invalid JSON: nested deeper than " + std::to_string(maxJsonDepth) + " levels at "
                    + describeLocation(currentPointer()));
            std::string segment;
            json* p = place(std::move(container), &segment);
            m_stack.push_back({ p, std::move(segment) });
            return true;
        }

        bool close()
        {
            m_stack.pop_back();
            return true;
        }

        std::string currentPointer() const
        {
            std::string out;
            for (std::size_t i = 1; i < m_stack.size(); ++i)
                appendPointerSegment(out, m_stack[i].segment);
            return out;
        }
    };

    // A chain through the caller's stack frames; rendered only when something goes wrong, so
    // the common path builds no strings for it.
    struct PathStep {
        const PathStep* parent;
        const std::string* key; // null for an array element
        std::size_t index;
    };

    std::string pointerOf(const PathStep* step)
    {
        std::vector<const PathStep*> steps;
        for (; step; step = step->parent)
            steps.push_back(step);
        std::string out;
        for (auto it = steps.rbegin(); it != steps.rend(); ++it)
            appendPointerSegment(out, (*it)->key ? *(*it)->key : std::to_string((*it)->index));
        return out;
    }

    class CanonicalWriter {
    public:
        std::string out;

        void value(const json& v, const PathStep* at, std::size_t depth)
        {
            switch (v.type()) {
            case json::value_t::null:
                out += "null";
                return;
            case json::value_t::boolean:
                out += v.get<bool>() ? "true" : "false";
                return;
            // JCS knows only IEEE-754 doubles: integers are converted before they are written,
            // exactly as a JavaScript peer would see them; one whose double names another
            // integer is refused (checkInteger).
            case json::value_t::number_integer:
                integer(std::to_string(v.get<json::number_integer_t>()),
                    static_cast<double>(v.get<json::number_integer_t>()), at);
                return;
            case json::value_t::number_unsigned:
                integer(std::to_string(v.get<json::number_unsigned_t>()),
                    static_cast<double>(v.get<json::number_unsigned_t>()), at);
                return;
            case json::value_t::number_float: {
                const double d = v.get<double>();
                if (!std::isfinite(d))
                    throw JsonError(JsonErrorKind::NumberRange, "NaN and Infinity have no JSON form (RFC 8785 section 3.2.2.3), at "
                        + describeLocation(pointerOf(at)));
                out += esNumberToString(d);
                return;
            }
            case json::value_t::string:
                string(v.get_ref<const std::string&>(), at, "string");
                return;
            case json::value_t::array:
                checkDepth(at, depth);
                out.push_back('[');
                for (std::size_t i = 0; i < v.size(); ++i) {
                    if (i)
                        out.push_back(',');
                    const PathStep step { at, nullptr, i };
                    value(v[i], &step, depth + 1);
                }
                out.push_back(']');
                return;
            case json::value_t::object:
                checkDepth(at, depth);
                object(v, at, depth);
                return;
            case json::value_t::binary:
                throw JsonError(JsonErrorKind::Unsupported, "binary values have no JSON form, at " + describeLocation(pointerOf(at)));
            case json::value_t::discarded:
                break;
            }
            throw JsonError(JsonErrorKind::Unsupported, "a discarded value has no JSON form, at " + describeLocation(pointerOf(at)));
        }

    private:
        void integer(const std::string& written, double d, const PathStep* at)
        {
            try {
                checkInteger(written, d);
            } catch (const JsonError& e) {
                throw JsonError(e.kind(), std::string(e.what()) + ", at " + describeLocation(pointerOf(at)));
            }
            out += esNumberToString(d);
        }

        struct Member {
            std::u16string sortKey;
            const std::string* name;
            const json* value;
        };

        // RFC 8785 section 3.2.3 orders names by UTF-16 code units, not by UTF-8 bytes or code
        // points: they differ when U+10000 and above (surrogates D800-DFFF) meet U+E000-U+FFFF.
        void object(const json& v, const PathStep* at, std::size_t depth)
        {
            std::vector<Member> members;
            members.reserve(v.size());
            for (const auto& [name, member] : v.get_ref<const json::object_t&>()) {
                if (const auto problem = utf8Problem(name)) {
                    const PathStep step { at, &name, 0 };
                    throw JsonError(JsonErrorKind::InvalidUtf8,
                        "member name is not valid UTF-8 (" + *problem + "), at " + describeLocation(pointerOf(&step)));
                }
                members.push_back({ utf8ToUtf16(name), &name, &member });
            }
            std::sort(
                members.begin(), members.end(), [](const Member& a, const Member& b) { return a.sortKey < b.sortKey; });
            out.push_back('{');
            bool first = true;
            for (const auto& m : members) {
                if (!first)
                    out.push_back(',');
                first = false;
                const PathStep step { at, m.name, 0 };
                string(*m.name, &step, "member name");
                out.push_back(':');
                value(*m.value, &step, depth + 1);
            }
            out.push_back('}');
        }

        // JSON.stringify's escaping: the two mandatory escapes, the five short forms, \u00xx
        // (lowercase) for the remaining C0 controls, and every other character verbatim.
        void string(const std::string& s, const PathStep* at, const char* what)
        {
            if (const auto problem = utf8Problem(s))
                throw JsonError(JsonErrorKind::InvalidUtf8, std::string(what) + " is not valid UTF-8 (" + *problem + "), at "
                    + describeLocation(pointerOf(at)));
            static constexpr char hex[] = "0123456789abcdef";
            out.push_back('"');
            for (char ch : s) {
                const auto c = static_cast<unsigned char>(ch);
                switch (c) {
                case '"':
                    out += "\\\"";
                    break;
                case '\\':
                    out += "\\\\";
                    break;
                case '\b':
                    out += "\\b";
                    break;
                case '\f':
                    out += "\\f";
                    break;
                case '\n':
                    out += "\\n";
                    break;
                case '\r':
                    out += "\\r";
                    break;
                case '\t':
                    out += "\\t";
                    break;
                default:
                    if (c < 0x20) {
                        out += "\\u00";
                        out.push_back(hex[c >> 4]);
                        out.push_back(hex[c & 0x0F]);
                    } else {
                        out.push_back(ch);
                    }
                }
            }
            out.push_back('"');
        }

        static void checkDepth(const PathStep* at, std::size_t depth)
        {
            if (depth >= maxJsonDepth)
                throw JsonError(JsonErrorKind::Depth, "nested deeper than " + std::to_string(maxJsonDepth) + " levels at "
                    + describeLocation(pointerOf(at)));
        }
    };
} // namespace

const char* jsonErrorKindName(JsonErrorKind kind)
{
    switch (kind) {
    case JsonErrorKind::Syntax:
        return "syntax";
    case JsonErrorKind::DuplicateKey:
        return "duplicate_key";
    case JsonErrorKind::InvalidUtf8:
        return "invalid_utf8";
    case JsonErrorKind::LoneSurrogate:
        return "lone_surrogate";
    case JsonErrorKind::NumberRange:
        return "number_range";
    case JsonErrorKind::Depth:
        return "depth";
    case JsonErrorKind::TrailingData:
        return "trailing_data";
    case JsonErrorKind::Empty:
        return "empty";
    case JsonErrorKind::Unsupported:
        return "unsupported";
    }
    return "syntax";
}

json parseJsonStrict(std::string_view text, JsonNumbers numbers)
{
    const char* const begin = text.data();
    const char* const end = begin + text.size();
    const char* readTo = begin;
    StrictBuilder builder(text, readTo, numbers);
    // Errors inside the value throw from the builder; non-strict mode stops after the value.
    json::sax_parse(TrackingIterator(begin, &readTo), TrackingIterator(end, &readTo), &builder,
        json::input_format_t::json, /*strict=*/false, /*ignore_comments=*/false);

    // The lexer has read one byte past a number (the one that ended it, perhaps a digit: "02"
    // is the number 0 followed by "2"), so a top-level number is measured again here.
    const auto documentEnd
        = builder.topLevelIsNumber ? numberEnd(text) : static_cast<std::size_t>(readTo - begin);
    for (std::size_t i = documentEnd; i < text.size(); ++i)
        if (!isJsonWhitespace(text[i]))
            throw JsonError(JsonErrorKind::TrailingData, "invalid JSON: unexpected " + describeByte(text[i]) + " at offset " + std::to_string(i)
                + " after the JSON document (only spaces, tabs and line breaks may follow it)");
    return std::move(builder.result);
}

std::string canonicalJson(const json& value)
{
    CanonicalWriter writer;
    writer.value(value, nullptr, 0);
    return std::move(writer.out);
}

std::string canonicalJsonFromText(std::string_view text) { return canonicalJson(parseJsonStrict(text)); }

std::string esNumberToString(double x)
{
    if (!std::isfinite(x))
        throw JsonError(JsonErrorKind::NumberRange, "NaN and Infinity have no JSON form (RFC 8785 section 3.2.2.3)");
    if (x == 0)
        return "0"; // -0 too
    std::string out;
    if (x < 0) {
        out.push_back('-');
        x = -x;
    }
    // to_chars without a precision gives the shortest digits that read back as the same double,
    // ties going to the closest and then to even: the digit string s of ECMA-262's
    // Number::toString. Scientific format hands us s and the exponent without any guessing.
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
    if (ec != std::errc())
        throw JsonError(JsonErrorKind::NumberRange, "cannot format number");
    const std::string_view sci(buf, static_cast<std::size_t>(end - buf)); // d[.ddd]e(+|-)XX
    const auto e = sci.find('e');
    std::string digits(1, sci[0]);
    if (e > 1)
        digits.append(sci.substr(2, e - 2));
    std::string_view expText = sci.substr(e + 1);
    if (!expText.empty() && expText.front() == '+')
        expText.remove_prefix(1);
    int exponent = 0;
    std::from_chars(expText.data(), expText.data() + expText.size(), exponent);

    // ECMA-262 Number::toString with k digits and the decimal point after n of them.
    const int k = static_cast<int>(digits.size());
    const int n = exponent + 1;
    if (k <= n && n <= 21) {
        out += digits;
        out.append(static_cast<std::size_t>(n - k), '0');
    } else if (0 < n && n <= 21) {
        out.append(digits, 0, static_cast<std::size_t>(n));
        out.push_back('.');
        out.append(digits, static_cast<std::size_t>(n));
    } else if (-6 < n && n <= 0) {
        out += "0.";
        out.append(static_cast<std::size_t>(-n), '0');
        out += digits;
    } else {
        out.push_back(digits[0]);
        if (k > 1) {
            out.push_back('.');
            out.append(digits, 1);
        }
        out.push_back('e');
        out.push_back(n - 1 >= 0 ? '+' : '-');
        out += std::to_string(std::abs(n - 1));
    }
    return out;
}

} // namespace idem
