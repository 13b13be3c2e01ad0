package werkbaum_test

import (
	"context"
	"errors"
	"fmt"

	"talkd/internal/werkbaum"
)

// A write as the plan store does it: apply a verb, then let the guards judge the result.
func Example() {
	ctx := context.Background()
	eng, err := werkbaum.NewEngine(werkbaum.Options{})
	if err != nil {
		panic(err)
	}
	plan := "[~] Shop #shop\n  - [ ] Cart #cart (M)\n  - [ ] Pay #pay (S)\n"

	next, err := eng.Apply(ctx, plan, werkbaum.SetStatus{ID: "cart", Status: "done"})
	if err != nil {
		panic(err)
	}
	fmt.Print(next)
	verdict, err := eng.Guard(ctx, plan, next, werkbaum.GuardOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("ok:", verdict.OK)

	// Marking a node as in production needs the allowProd switch.
	prod, _ := eng.Apply(ctx, plan, werkbaum.SetStatus{ID: "pay", Status: "prod"})
	verdict, _ = eng.Guard(ctx, plan, prod, werkbaum.GuardOptions{})
	fmt.Println("ok:", verdict.OK, "switch:", verdict.Refused.Switch)

	// The caller's mistakes are InputErrors with a stable code.
	_, err = eng.Apply(ctx, plan, werkbaum.MoveNode{ID: "shop", Parent: "cart"})
	var ie *werkbaum.InputError
	fmt.Println(errors.As(err, &ie), ie.Code)

	in, _ := eng.Inspect(ctx, next, werkbaum.InspectOptions{Include: []string{"path"}})
	fmt.Println("stations:", in.Path.Stations, "cost:", in.Path.Cost)
	// Output:
	// [~] Shop #shop
	//   - [x] Cart #cart (M)
	//   - [ ] Pay #pay (S)
	// ok: true
	// ok: false switch: allowProd
	// true moveIntoItself
	// stations: [3] cost: 2
}
