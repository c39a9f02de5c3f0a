int dep_value(void);
int user_value(void) { return dep_value() + 1; }
