#define TRAINSIM_DATADIR "/usr/local/share/trainsim"
#define TRAINSIM_SRCDIR "/work/wt/h11"
#define TRAINSIM_BUILD_EXE "/work/wt/h11/trainsim"
