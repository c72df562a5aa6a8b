/* Shared list navigation for list-like views; see view.h. */
#include "view.h"

void list_nav_fix(struct list_nav *nav, int n, int page)
{
	if (page < 1)
		page = 1;
	if (nav->cur >= n)
		nav->cur = n - 1;
	if (nav->cur < 0)
		nav->cur = 0;
	if (nav->top > nav->cur)
		nav->top = nav->cur;
	if (nav->cur >= nav->top + page)
		nav->top = nav->cur - page + 1;
	if (nav->top > n - page)
		nav->top = n - page;
	if (nav->top < 0)
		nav->top = 0;
}

bool list_nav_request(struct list_nav *nav, enum tui_action a, int n, int page)
{
	switch (a) {
	case A_MOVE_UP: nav->cur--; break;
	case A_MOVE_DOWN: nav->cur++; break;
	case A_PAGE_UP: nav->cur -= page > 1 ? page - 1 : 1; break;
	case A_PAGE_DOWN: nav->cur += page > 1 ? page - 1 : 1; break;
	case A_MOVE_FIRST: case A_MOVE_HOME: nav->cur = 0; break;
	case A_MOVE_LAST: case A_MOVE_END: nav->cur = n - 1; break;
	default: return false;
	}
	list_nav_fix(nav, n, page);
	return true;
}
