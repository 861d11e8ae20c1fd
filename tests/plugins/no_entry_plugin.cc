// A shared library without the entry symbol.
extern "C" __attribute__((visibility("default"))) int not_the_entry_symbol() { return 42; }
